"""A one-node SLURM cluster on localhost for the tests marked `slurm`: munge, MariaDB (the
accounting database), slurmdbd, slurmctld and slurmd from Debian's packages, every file in one
temporary folder (its own, which munged wants readable by all up to /) and every port a free one on 127.0.0.1. The daemons run in the foreground as
children of the test, so stop() ends exactly the processes start() began."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

# The programs the cluster needs, and the Debian packages that hold them (Makefile: slurm-packages).
PROGRAMS = {"munged": "munge", "mariadbd": "mariadb-server-core", "slurmdbd": "slurmdbd",
            "slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client", "sacct": "slurm-client"}
SBIN = ("/usr/sbin", "/usr/bin")
SLOTS = 8  # CPUs the node offers whatever this machine has (config_overrides): the test's jobs mostly wait


class ClusterError(RuntimeError):
    """A daemon did not start; the message holds the tail of its log."""


def missing_programs() -> list[str]:
    """The programs of PROGRAMS found neither on PATH nor in /usr/sbin."""
    return [p for p in PROGRAMS if not shutil.which(p, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN]))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Cluster:
    """munge + MariaDB + slurmdbd + slurmctld + slurmd in a new temporary folder, one partition
    `debug` of one node with SLOTS CPUs; `env` is the environment in which SLURM's
    commands reach it. stop() removes the folder."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="membound-slurm-"))
        self.root.chmod(0o755)
        self.node = socket.gethostname().split(".")[0]
        self.ports = {name: _free_port() for name in ("mysql", "dbd", "ctld", "slurmd")}
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env = {**os.environ, "SLURM_CONF": str(self.root / "slurm.conf"),
                    "PATH": os.pathsep.join([os.environ.get("PATH", ""), *SBIN])}

    def _path(self, name: str, mode: int = 0o755) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(mode)
        return path

    def _write_config(self) -> None:
        r, p = self.root, self.ports
        run, log = self._path("run"), self._path("log")
        for d in ("state", "spool", "db"):
            self._path(d, 0o700)
        key = self._path("munge", 0o700) / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        auth = f"AuthType=auth/munge\nAuthInfo=socket={run}/munge.sock\n"
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 * 3 // 4
        (r / "slurm.conf").write_text(f"""ClusterName=membound-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={p['ctld']}
SlurmdPort={p['slurmd']}
{auth}CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={run}/slurmctld.pid
SlurmdPidFile={run}/slurmd.pid
SlurmctldLogFile={log}/slurmctld.log
SlurmdLogFile={log}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={p['dbd']}
AccountingStoragePass={run}/munge.sock
AccountingStoreFlags=job_comment
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={SLOTS} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        dbd = r / "slurmdbd.conf"
        dbd.write_text(f"""{auth}DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={p['dbd']}
SlurmUser=root
PidFile={run}/slurmdbd.pid
LogFile={log}/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={p['mysql']}
StorageUser=root
StorageLoc=slurm_acct_db
""")
        dbd.chmod(0o600)

    def _spawn(self, name: str, argv: list[str], ready, log: str, timeout: float = 60) -> None:
        out = open(self.root / "log" / f"{name}.out", "w")
        self.procs.append((name, subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL)))
        deadline = time.monotonic() + timeout
        while not ready():
            if self.procs[-1][1].poll() is not None or time.monotonic() > deadline:
                tail = "".join((self.root / "log" / f).read_text()[-1500:]
                               for f in (log, f"{name}.out") if (self.root / "log" / f).exists())
                raise ClusterError(f"{name} did not start: {tail.strip()}")
            time.sleep(0.2)

    def _idle(self) -> bool:
        run = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True, text=True)
        return run.stdout.strip() == "idle"

    def start(self) -> "Cluster":
        """Write the configuration and start every daemon, each once the one before answers."""
        self._write_config()
        r, run = self.root, self.root / "run"
        self._spawn("munged", ["munged", "-F", f"--key-file={r}/munge/munge.key", f"--socket={run}/munge.sock",
                               f"--pid-file={run}/munged.pid", f"--log-file={r}/log/munged.log",
                               f"--seed-file={r}/munge/seed"],
                    lambda: (run / "munge.sock").exists(), "munged.log")
        self._spawn("mariadbd", ["mariadbd", "--no-defaults", f"--datadir={r}/db", "--user=root",
                                 "--skip-grant-tables", "--bind-address=127.0.0.1", f"--port={self.ports['mysql']}",
                                 f"--socket={run}/mysqld.sock", f"--pid-file={run}/mysqld.pid",
                                 f"--log-error={r}/log/mysqld.log", "--innodb-buffer-pool-size=16M"],
                    lambda: _listening(self.ports["mysql"]), "mysqld.log")
        self._spawn("slurmdbd", ["slurmdbd", "-D"], lambda: _listening(self.ports["dbd"]), "slurmdbd.log")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"], lambda: _listening(self.ports["ctld"]), "slurmctld.log")
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.node], self._idle, "slurmd.log")
        return self

    def stop(self) -> None:
        """Cancel the jobs still in the cluster, then end the daemons start() began, the last
        started first."""
        if any(name == "slurmd" and proc.poll() is None for name, proc in self.procs):
            subprocess.run(["scancel", "--user", getpass.getuser()], env=self.env, capture_output=True)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and subprocess.run(
                    ["squeue", "-h"], env=self.env, capture_output=True, text=True).stdout.strip():
                time.sleep(0.5)
        for _name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def queue(self) -> dict[int, str]:
        """Job id -> comment of every job pending or running now (squeue: at once, where sacct lags)."""
        out = subprocess.run(["squeue", "-h", "-o", "%i|%k"], env=self.env, capture_output=True, text=True,
                             check=True).stdout
        return {int(i): comment for i, comment in (line.split("|", 1) for line in out.splitlines() if line)}

    def sacct(self, *fields: str) -> list[list[str]]:
        """Every job the accounting database holds (allocations, not steps): the given fields."""
        out = subprocess.run(["sacct", "-X", "-a", "--parsable2", "--noheader", "--starttime", "now-1days",
                              f"--format={','.join(fields)}"],
                             env=self.env, capture_output=True, text=True, check=True).stdout
        return [line.split("|") for line in out.splitlines() if line]
