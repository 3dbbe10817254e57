"""Fetching a SuiteSparse tarball: a pre-staged copy first, else a streamed download from the
configured base URL with a progress bar, retries with back-off and resume of a partial file (HTTP
Range). A tarball is checked against its recorded hash, if any, before it takes its final name;
conversion records a new one."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import requests
from tqdm import tqdm

from membound.matrices import MatrixError, lock

SUITESPARSE = "https://sparse.tamu.edu/MM"


class Incomplete(IOError):
    """The connection ended before the whole file arrived (the next try resumes)."""


def index_lookup(entry: dict):
    """The SuiteSparse index record of exactly `entry`'s group and name (ssgetpy's search is a LIKE)."""
    group, name = entry["group"], entry["name"]
    try:
        import ssgetpy  # loads (and on first use downloads) the index
        hits = ssgetpy.search(group=group, name=name, limit=10_000)
    except Exception as err:  # noqa: BLE001 - any failure means the index is out of reach
        raise MatrixError(f"SuiteSparse index unreachable ({type(err).__name__}); download on a node with "
                          "internet, or set download.staged_dir to a folder of pre-staged tarballs") from None
    exact = [m for m in hits if m.group == group and m.name == name]
    if len(exact) != 1:
        similar = ", ".join(f"{m.group}/{m.name}" for m in hits[:5]) or "none"
        raise MatrixError(f"{group}/{name} is not in the SuiteSparse index (similar: {similar}); "
                          "fix group/name in config/matrices.yaml")
    if exact[0].rows != entry["rows"]:
        raise MatrixError(f"{group}/{name}: the SuiteSparse index has {exact[0].rows} rows, "
                          f"config/matrices.yaml {entry['rows']}; fix config/matrices.yaml")
    return exact[0]


def stream(url: str, part: Path, timeout_s: float, progress: bool = True) -> None:
    """Download `url` into `part`, continuing from what `part` already holds when the server allows."""
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with requests.get(url, stream=True, timeout=timeout_s, headers=headers) as resp:
        if resp.status_code == 416 and have:  # nothing left to send: the part is whole, or is junk
            total = resp.headers.get("Content-Range", "").rpartition("/")[2]
            if total == str(have):
                return
            part.unlink()
            raise Incomplete(f"the partial file does not fit the server's ({total} bytes); restarting")
        resp.raise_for_status()
        if resp.status_code != 206:
            have = 0  # the server ignored the Range header: start over
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length is not None else None
        with open(part, "ab" if have else "wb") as fh, \
                tqdm(total=total, initial=have, unit="B", unit_scale=True, desc=part.name.split(".")[0],
                     file=sys.stderr, mininterval=2.0, disable=not progress) as bar:
            for block in resp.iter_content(1 << 16):
                fh.write(block)
                bar.update(len(block))
        got = part.stat().st_size
        if total is not None and got != total:
            raise Incomplete(f"got {got} of {total} bytes")


def retryable(err: Exception) -> bool:
    """Whether `err` may pass on a later try (network trouble, server errors, an interrupted body)."""
    if isinstance(err, requests.HTTPError):
        return err.response is not None and (err.response.status_code >= 500 or err.response.status_code in (408, 429))
    return isinstance(err, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                            Incomplete))


def fetch(entry: dict, dest, *, base_url: str, staged_dir: str, lockfile, retries: int, timeout_s: float,
          backoff_s: float = 2.0, progress: bool = True) -> tuple[str, bool]:
    """Put `entry`'s tarball at `dest`, checked against its hash in `lockfile` if one is recorded;
    returns where it came from and whether the hash matched (False: new, recorded after conversion)."""
    name, dest = entry["name"], Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    if staged_dir and not Path(staged_dir).is_dir():
        raise MatrixError(f"download.staged_dir {staged_dir}: no such folder; fix the path, or set it to \"\" "
                          "to download")
    staged = Path(staged_dir) / f"{name}.tar.gz" if staged_dir else None
    if staged is not None and staged.is_file():
        shutil.copyfile(staged, part)
        origin = str(staged)
    else:
        if base_url.rstrip("/") == SUITESPARSE:
            index_lookup(entry)
        origin = f"{base_url.rstrip('/')}/{entry['group']}/{name}.tar.gz"
        for attempt in range(retries + 1):
            try:
                stream(origin, part, timeout_s, progress)
                break
            except (requests.RequestException, Incomplete) as err:
                if attempt == retries or not retryable(err):
                    raise MatrixError(f"{origin}: download failed after {attempt + 1} tries ({err}); check "
                                      f"download.base_url, or put {name}.tar.gz in download.staged_dir") from None
                print(f"{origin}: {err}; retrying in {backoff_s * 2 ** attempt:g} s", file=sys.stderr)
                time.sleep(backoff_s * 2 ** attempt)
    try:
        known = lock.check(part, name, lockfile)
    except MatrixError:
        part.unlink()
        raise
    os.replace(part, dest)
    return origin, known
