"""Safe reading of a SuiteSparse tarball: only `<name>/<name>.mtx` is taken, and an archive with an
absolute path, a `..` component, a link or a device file is refused before anything is read."""

from __future__ import annotations

import tarfile
import zlib
from pathlib import PurePosixPath

from membound.matrices import MatrixError


def check_member(tarball, member: tarfile.TarInfo) -> None:
    """Refuse `member` unless it is a plain file or folder with a relative path inside the archive."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        raise MatrixError(f"{tarball}: refusing member '{member.name}' (absolute path or '..'); "
                          "the archive is not a SuiteSparse tarball, delete it and download it again")
    if not (member.isfile() or member.isdir()):
        raise MatrixError(f"{tarball}: refusing member '{member.name}' (a link or device file); "
                          "the archive is not a SuiteSparse tarball, delete it and download it again")


def read_mtx(tarball, name: str) -> bytes:
    """The bytes of `<name>/<name>.mtx` inside `tarball`, in one streaming pass that checks every member."""
    wanted, data = f"{name}/{name}.mtx", None
    try:
        with tarfile.open(tarball, "r|*") as tar:
            for member in tar:
                check_member(tarball, member)
                if member.isfile() and member.name.removeprefix("./") == wanted:
                    data = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise MatrixError(f"{tarball}: unreadable archive ({err}); delete it and download it again") from err
    if data is None:
        raise MatrixError(f"{tarball}: no member {wanted}; check the matrix name, or delete the tarball "
                          "and download it again")
    return data
