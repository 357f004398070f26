"""pb_utils.Logger: Log frames carrying the caller's file name and line."""

import enum
import os
import sys

from . import conn as _conn
from . import protocol as P


class LogLevel(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3


_NAMES = "IWEV"


def emit(level, message, filename, line):
    c = _conn.CONN
    if c is None:
        sys.stderr.write("%s %s:%d] %s\n" % (_NAMES[level], filename, line, message))
        sys.stderr.flush()
        return
    out = [P.U8.pack(level)]
    P.p_str(out, filename)
    out.append(P.U32.pack(line))
    P.p_str(out, message)
    c.send(P.frame(P.LOG, 0, out))


def _log(message, level, depth):
    level = LogLevel(level)
    f = sys._getframe(depth)
    emit(int(level), str(message), os.path.basename(f.f_code.co_filename), f.f_lineno)


class Logger:
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
