"""How fast POST /workspace/import refuses compression bombs (issue 13: 413 within 1 s).

Builds two ~12 MB gzip archives and posts each to a gunicorn of this tree on the embedded
default (a fresh data dir), several times, reporting the status, the detail and the time:
  header:  one tar member whose header declares 12 GiB (refused on the member size);
  ratio:   400 members of 30 MiB of zeros (refused on the compression ratio).
Before the streamed reader (issue 13) the first such archive took 33 s.

    .venv/bin/python bench/import_bomb.py [--runs 5]
"""

import argparse
import gzip
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _http import ROOT, manage, start_gunicorn, wait_healthy

MIB = 1024 * 1024


def header_bomb() -> bytes:
    """A tar header declaring 12 GiB, followed by 12 MB of the data it promises."""
    info = tarfile.TarInfo("big.md")
    info.size = 12 * 1024 * MIB
    raw = info.tobuf(format=tarfile.GNU_FORMAT) + os.urandom(12 * 1000 * 1000)
    return gzip.compress(raw, compresslevel=1)


def ratio_bomb() -> bytes:
    """400 members of 30 MiB of zeros: 12 GiB unpacked from ~12 MB."""
    out = io.BytesIO()
    zeros = bytes(30 * MIB)
    with (
        gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w|") as tar,
    ):
        for i in range(400):
            info = tarfile.TarInfo(f"notes/{i}.md")
            info.size = len(zeros)
            tar.addfile(info, io.BytesIO(zeros))
    return out.getvalue()


def post(url: str, key: str, path: Path) -> tuple[int, str, float]:
    """curl, not urllib: the server answers 413 before the upload ends and closes the
    connection, which urllib reports as a broken pipe instead of the answer."""
    start = time.perf_counter()
    done = subprocess.run(
        [
            *("curl", "-s", "-X", "POST", "--data-binary", f"@{path}"),
            *("-H", f"Authorization: Bearer {key}", "-H", "Content-Type: application/gzip"),
            *("-w", "\n%{http_code}", f"{url}/api/v1/workspace/import"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    body, _, status = done.stdout.rpartition("\n")
    return int(status or 0), body[:160], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bombs = {"header": header_bomb(), "ratio": ratio_bomb()}
    with tempfile.TemporaryDirectory(prefix="memoryhub-bomb-") as data_dir:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "DATABASE_REPLICA_URL", "CELERY_BROKER_URL", "CACHE_URL")
        }
        env.update(MEMORYHUB_DATA_DIR=data_dir, PYTHONPATH=str(ROOT))
        manage(env, "migrate", "--noinput")
        key = manage(env, "create_agent", "bomb-bench").strip().splitlines()[-1]
        with open(Path(data_dir) / "web.log", "w") as log:
            proc, url = start_gunicorn(env, log, threads=2)
            try:
                wait_healthy(url, proc)
                for name, body in bombs.items():
                    path = Path(data_dir) / f"{name}.tar.gz"
                    path.write_bytes(body)
                    post(url, key, path)  # the first request of a worker loads more code
                    runs = [post(url, key, path) for _ in range(args.runs)]
                    ms = [1000 * s for _, _, s in runs]
                    print(
                        f"{name:<7} {len(body) / 1e6:5.1f} MB  status {runs[0][0]}  "
                        f"median {statistics.median(ms):6.1f} ms  max {max(ms):6.1f} ms  "
                        f"load {os.getloadavg()[0]:.1f}\n        {runs[0][1]}"
                    )
            finally:
                proc.terminate()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main()
