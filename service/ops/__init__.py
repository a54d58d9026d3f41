"""Operations read back for people: impact and breaking changes of a publish, why a tool is not offered, health.

Plain Python, no Flask (the HTTP side is `service.api.ops`). These read the registry and the conversations; what
they read the records from (the call log, the audit trail, metrics, logs) is `service.records`, one layer below.
"""
