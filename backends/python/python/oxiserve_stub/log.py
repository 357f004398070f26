"""pb_utils.Logger and LogLevel: messages carrying the caller's file name and line.

User-facing only: in an instance process the entry point gives the instance's Context
to `Logger._ctx` and messages go to the server through it (a Log frame); elsewhere (the
zygote, tests) they are written to stderr.
"""

import enum
import os
import sys

from .argcheck import as_str, fail


class LogLevel(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3


_NAMES = "IWEV"


def emit(level, message, filename, line):
    ctx = Logger._ctx
    if ctx is None:
        sys.stderr.write("%s %s:%d] %s\n" % (_NAMES[level], filename, line, message))
        sys.stderr.flush()
        return
    ctx.log(level, message, filename, line)


def _log(message, level, depth):
    # as pybind11 converts Triton's (std::string message, LogLevel level): TypeError for
    # a message that is no str or bytes, a level that is no LogLevel (a plain int too)
    message = as_str(message, "Logger.log", "message")
    if not isinstance(level, LogLevel):
        fail("Logger.log", "level", level)
    f = sys._getframe(depth)
    emit(int(level), message, os.path.basename(f.f_code.co_filename), f.f_lineno)


class Logger:
    _ctx = None  # the instance's Context: set once by the entry point (instance.serve)

    LogLevel = LogLevel
    INFO = LogLevel.INFO
    WARNING = LogLevel.WARNING
    ERROR = LogLevel.ERROR
    VERBOSE = LogLevel.VERBOSE

    @staticmethod
    def log(message, level=LogLevel.INFO):
        _log(message, level, 2)

    @staticmethod
    def log_info(message):
        _log(message, LogLevel.INFO, 2)

    @staticmethod
    def log_warn(message):
        _log(message, LogLevel.WARNING, 2)

    @staticmethod
    def log_error(message):
        _log(message, LogLevel.ERROR, 2)

    @staticmethod
    def log_verbose(message):
        _log(message, LogLevel.VERBOSE, 2)
