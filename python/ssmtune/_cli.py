"""The `ssmtune` console script of an installed package: runs the bundled
command (beside libssmtune.so) with the same arguments."""
import os
import sys

from . import _lib


def main():
    exe = _lib.executable()
    if exe is None:
        sys.exit("ssmtune: the bundled ssmtune command was not found beside the library")
    os.execv(str(exe), [str(exe)] + sys.argv[1:])
