"""Importing tools from an OpenAPI 3.0 or 3.1 document: one operation, one tool draft.

Plain Python over the registry, no Flask: the REST API, the MCP server and the dashboard all call `run_import`.
The document is read within bounds (`document`), its local `$ref`s followed on demand (`refs`), each operation
mapped and checked by the registry's own rules (`operations`, `schemas`), and the chosen drafts written in one
transaction with one audit record (`plan`). A document at an address is fetched through the dispatcher's guard and
deadline (`fetch`).
"""
from service.importing.document import read_document
from service.importing.fetch import fetch_document
from service.importing.options import FIELDS, ImportOptions
from service.importing.plan import CREATED, NEW_DRAFT, READY, REFUSED, REGISTER, SKIPPED, run_import

__all__ = ["CREATED", "FIELDS", "ImportOptions", "NEW_DRAFT", "READY", "REFUSED", "REGISTER", "SKIPPED",
           "fetch_document", "read_document", "run_import"]
