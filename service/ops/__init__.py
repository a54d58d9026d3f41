"""Operations: the call log, the audit trail, impact and breaking changes, "why not offered", metrics and logs.

Plain Python, no Flask (the HTTP side is `service.api.ops`). Import the modules themselves: this package imports
nothing on its own, so the registry can record audit entries without pulling in the conversations.
"""
