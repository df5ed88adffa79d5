"""Errors that are reported to the caller with a stable `type`."""


class EngineError(Exception):
    """type: BadRequest | UnknownOp | PolicyNotLoaded | VersionMismatch | LoadError | CheckpointMissing |
    KvCacheTooSmall"""

    def __init__(self, type_: str, message: str):
        super().__init__(message)
        self.type = type_
