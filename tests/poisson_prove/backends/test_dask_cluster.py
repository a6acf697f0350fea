"""The Dask backend on a cluster it did not start: a real `dask scheduler` and two `dask worker`
processes on 127.0.0.1 speaking TLS with certificates this test makes, the workers started in
another working folder. The sweep reaches them with the spec's `[dask]` TLS files, ships the
spec's folder (the workers import the agent from their own copy), forwards a named variable
(never stored), says that the workers lack an instrumentor the sweeping machine has, and stores
twins identical to a local run's."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.conftest import CLI, assert_clean_error, isolated_env
from tests.poisson_prove.backends.conftest import essence, read_rows, sweep_args

TOKEN = "sk-test-7f3e1c0d9b"  # what the rollout needs in its environment (AGENT's); must reach no file

AGENT = """
import os
import random
from poisson_prove import Episode

TOKEN = "sk-test-7f3e1c0d9b"

def rollout(cfg, seed):
    if os.environ.get("PROVE_TEST_TOKEN") != TOKEN:
        raise RuntimeError("no token in this worker's environment")
    rng = random.Random(seed)
    outcome = "fail" if rng.random() < cfg["p"] else "ok"
    where = os.path.dirname(os.path.abspath(__file__))
    return Episode(outcome, rng.randint(1, 9), 10, {"case_id": f"c{seed % 5}", "where": where})
"""

SPEC = """
target = "agent:rollout"
target_id = "remote"
replicates = 12

[axes.p]
type = "continuous"
values = [0.2, 0.6]

[declare]
outcomes = ["ok", "fail"]
failures = ["fail"]

[capture]
instrument = ["fake"]
max_observation_bytes = 256

[dask]
address = "{address}"
tls_ca_file = "certs/ca.pem"
tls_client_cert = "certs/node.pem"
tls_client_key = "certs/node.key"
require_encryption = true
env = ["PROVE_TEST_TOKEN"]
concurrency = 4
"""

# An instrumentor installed only where the sweep runs (its folder is on the sweep's PYTHONPATH).
FAKE_INSTRUMENTOR = """
class FakeInstrumentor:
    is_instrumented_by_opentelemetry = False

    def instrumentation_dependencies(self):
        return []

    def instrument(self, **kwargs):
        self.is_instrumented_by_opentelemetry = True
"""


def _certificates(folder: Path) -> None:
    """A CA and one certificate for 127.0.0.1 signed by it (scheduler, workers and client)."""
    folder.mkdir()
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "prove test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress

    node = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "node.pem").write_bytes(node.public_bytes(serialization.Encoding.PEM))
    (folder / "node.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption())
    )


def _wait(what: str, ready, processes: list[subprocess.Popen[bytes]], timeout: float = 120) -> None:
    """Poll `ready()` until true; fail (with the processes' state) past a generous timeout."""
    deadline = time.monotonic() + timeout
    while not ready():
        dead = [p.args for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            pytest.fail(f"{what}: not ready (exited: {dead})")
        time.sleep(0.2)


@pytest.fixture
def tls_cluster(tmp_path: Path, home: Path) -> Iterator[tuple[str, Path, Path]]:
    """(scheduler address, the certificates' folder, the workers' folder): a scheduler and two
    one-process workers (nanny'd, 2 threads each), all over TLS, in a folder of their own."""
    certs = tmp_path / "certs"
    _certificates(certs)
    place = tmp_path / "cluster"
    place.mkdir()
    tls = ["--tls-ca-file", str(certs / "ca.pem"), "--tls-cert", str(certs / "node.pem"),
           "--tls-key", str(certs / "node.key")]
    dask = str(Path(sys.executable).parent / "dask")
    env = isolated_env(home)
    scheduler_file = place / "scheduler.json"
    started: list[subprocess.Popen[bytes]] = []
    log = open(place / "cluster.log", "wb")  # noqa: SIM115 (closed below, after the processes)
    try:
        started.append(subprocess.Popen(
            [dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(scheduler_file), *tls],
            cwd=place, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        ))
        _wait("the scheduler", scheduler_file.exists, started)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:"), address
        for n in range(2):
            started.append(subprocess.Popen(
                [dask, "worker", address, "--nthreads", "2", "--nworkers", "1", "--host", "127.0.0.1",
                 "--no-dashboard", "--local-directory", str(place / f"w{n}"), "--name", f"w{n}", *tls],
                cwd=place, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
            ))
        # Each worker logs "Registered to: <scheduler>" once the scheduler has it.
        _wait("two workers", lambda: (place / "cluster.log").read_text(errors="replace").count(
            "Registered to:") >= 2, started)
        yield address, certs, place
    finally:
        for process in reversed(started):
            process.terminate()
        for process in reversed(started):
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=60)
        log.close()


def test_a_tls_cluster_in_another_folder_runs_the_twins_of_a_local_run(
    tls_cluster: tuple[str, Path, Path], tmp_path: Path, home: Path
) -> None:
    address, certs, place = tls_cluster
    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT)
    (work / "prove.toml").write_text(SPEC.format(address=address))
    (work / "certs").symlink_to(certs)  # read from the spec's folder; never shipped (see below)
    fake = tmp_path / "fake-instrumentor"
    (fake / "fakeinst-1.0.dist-info").mkdir(parents=True)
    (fake / "fakeinst.py").write_text(FAKE_INSTRUMENTOR)
    (fake / "fakeinst-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakeinst\nVersion: 1.0\n"
    )
    (fake / "fakeinst-1.0.dist-info" / "entry_points.txt").write_text(
        "[opentelemetry_instrumentor]\nfake = fakeinst:FakeInstrumentor\n"
    )
    prove = CLI("poisson-prove", work, home)
    path = os.pathsep.join(filter(None, [str(fake), os.environ.get("PYTHONPATH")]))
    env = {"PROVE_TEST_TOKEN": TOKEN, "PYTHONPATH": path}

    remote = prove(*sweep_args("--name", "remote", "--backend", "dask"), env=env, timeout=300)
    assert remote.returncode == 0, remote.stdout + remote.stderr
    assert "Traceback" not in remote.stderr, remote.stderr
    local = prove(*sweep_args("--name", "here", "--backend", "local"), env=env)
    assert local.returncode == 0, local.stderr

    store = work / "prove-runs"
    remote_rows, local_rows = read_rows(store, "remote"), read_rows(store, "here")
    assert len(remote_rows) == 24 and all(r["error_kind"] is None for r in remote_rows), remote_rows
    assert essence(remote_rows) == essence(local_rows)

    # The workers imported the agent from their own copy of the spec's folder, unpacked in their
    # local directories, not from the sweeping machine's path.
    import duckdb

    wheres = {json.loads(meta)["where"] for (meta,) in duckdb.sql(
        f"select meta from read_parquet('{store}/*/episodes/*.parquet') where run_id in "
        f"(select run_id from read_json_auto('{store}/*/manifest.json') where name = 'remote')"
    ).fetchall()}
    assert wheres and all(Path(w).is_relative_to(place) for w in wheres), wheres
    assert {Path(w).relative_to(place).parts[0] for w in wheres} <= {"w0", "w1"}
    # ... and the copies (which never held the TLS files) are gone once the sweep ended.
    assert not [p for p in place.rglob("*-spec") if p.is_dir()]

    manifest = next(m for m in map(json.loads, (p.read_text() for p in store.glob("*/manifest.json")))
                    if m["name"] == "remote")
    missing = manifest["capture"]["missing"]
    assert set(missing) == {"fake"} and "not installed on 2 of 2 Dask workers" in missing["fake"], missing
    assert "capture without spans from fake (not installed on 2 of 2 Dask workers" in remote.stdout
    here = next(m for m in map(json.loads, (p.read_text() for p in store.glob("*/manifest.json")))
                if m["name"] == "here")
    assert here["capture"]["missing"] == {}

    # The forwarded value reached the workers (no episode errored) and no file of the store.
    for path in store.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_missing_tls_files_and_unset_variables_are_refused_before_anything_is_written(
    prove, workdir: Path
) -> None:
    spec = SPEC.replace("[capture]\ninstrument = [\"fake\"]\nmax_observation_bytes = 256\n", "")
    (workdir / "agent.py").write_text(AGENT)
    (workdir / "prove.toml").write_text(spec.format(address="tls://127.0.0.1:9"))
    no_file = prove(*sweep_args("--backend", "dask"), env={"PROVE_TEST_TOKEN": TOKEN})
    assert_clean_error(no_file, 1, f"[dask] tls_ca_file: no file {workdir / 'certs' / 'ca.pem'}")
    assert "next: point tls_ca_file at a PEM file, relative to the spec's folder" in no_file.stderr
    _certificates(workdir / "certs")
    unset = prove(*sweep_args("--backend", "dask"))
    assert_clean_error(unset, 1, "[dask] env names PROVE_TEST_TOKEN, not set in the sweep's environment")
    assert not (workdir / "prove-runs").exists()
