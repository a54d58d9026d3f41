"""What happened, kept: the call log, the hash-chained audit trail, metrics and log lines.

Below the registry, keys and conversations, which write into these inside their own transactions; above only
models, database and limits. Reading them back for people (impact, why-not-offered, health) is `service.ops`.
"""
