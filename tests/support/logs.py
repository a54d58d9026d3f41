"""The service's log lines, caught as production writes them."""

import contextlib
import io
import json
import logging
from typing import Iterator


@contextlib.contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Every line the service's loggers write meanwhile, formatted as in production; yields the buffer."""
    from service.records.logs import ROOT_LOGGER, JsonFormatter

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(ROOT_LOGGER)
    logger.addHandler(handler)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)


def log_lines(buffer: io.StringIO) -> list[dict]:
    """The JSON lines `captured_logs` caught."""
    return [json.loads(line) for line in buffer.getvalue().splitlines()]
