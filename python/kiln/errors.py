# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln's exceptions: every failed runtime call raises Error, carrying the
runtime's status code (runtime/include/kiln/runtime.h) and message."""
import enum


class Status(enum.IntEnum):
    """kiln_status_code_t."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    DATA_LOSS = 3
    UNIMPLEMENTED = 4
    UNAVAILABLE = 5
    RESOURCE_EXHAUSTED = 6
    INTERNAL = 7
    PERMISSION_DENIED = 8


class Error(Exception):
    """A failed kiln call: `code` (a Status) and `message`, the runtime's."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = Status(code)
        self.message = message

    def __str__(self):
        return f"{self.message} ({self.code.name})"


class CompileError(Error):
    """The compiler refused a model; `message` holds its errors (the lines
    `kiln compile` prints), which name the node or option at fault."""

    def __init__(self, message, command):
        super().__init__(Status.INVALID_ARGUMENT, message)
        self.command = command


def from_status(code, message):
    """The exception for a failed status (called by the native module)."""
    return Error(code, message)
