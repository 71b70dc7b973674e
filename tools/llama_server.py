"""llama.cpp's own `llama-server` serving the GGUF file of the built-in `smollm2` judge on a loopback port, for the tests
and the benchmark that run the `openai` backend against a server this project did not write (`make test-servers`).

The binary comes from `CHECKEVAL_LLAMA_SERVER` (`make test-servers` sets it to the build it caches under
`data/cache/llama.cpp/<version>/bin/`, see tools/llama_server.sh). `serve()` starts it, waits for `/health`, and stops it
when the block ends, also on an error."""
from __future__ import annotations
import contextlib, json, os, socket, subprocess, tempfile, time, urllib.error, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINARY_ENV = 'CHECKEVAL_LLAMA_SERVER'                 # the llama-server binary (make test-servers sets it)
URL_ENV = 'CHECKEVAL_URL_LLAMACPP_SMOLLM2'            # the base URL the judges-file entry `llamacpp-smollm2` reads
JUDGE = 'llamacpp-smollm2'
MODEL = 'SmolLM2-135M-Instruct-Q4_1-llama.cpp'        # the id the server answers to (--alias); the judge entry's model


def version() -> str:
    "The llama-cpp-python version whose vendored llama.cpp is built (tools/llama-server.requirements.txt)."
    for line in (ROOT / 'tools' / 'llama-server.requirements.txt').read_text().splitlines():
        if line.startswith('llama-cpp-python=='): return line.split('==', 1)[1].split()[0]
    raise ValueError('tools/llama-server.requirements.txt names no llama-cpp-python version')


def cached_binary() -> Path:
    "Where `make test-servers` keeps its build."
    return ROOT / 'data' / 'cache' / 'llama.cpp' / version() / 'bin' / 'llama-server'


def binary() -> tuple[Path|None, str]:
    "The llama-server binary named by `CHECKEVAL_LLAMA_SERVER`, or None and why there is none (a skip reason)."
    v = os.environ.get(BINARY_ENV)
    if not v:
        c = cached_binary()
        hint = f'a build is cached at {c}: {BINARY_ENV}={c}' if c.exists() else 'run `make test-servers` (it builds one and sets it)'
        return None, f'no llama-server: {BINARY_ENV} is not set ({hint})'
    p = Path(v)
    if not (p.is_file() and os.access(p, os.X_OK)): return None, f'no llama-server: {BINARY_ENV}={v} is not an executable file'
    return p, ''


def free_port() -> int:
    "A loopback port nothing listens on now."
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _health(url:str) -> bool:
    try:
        with urllib.request.urlopen(url + '/health', timeout=2) as r: return r.status == 200
    except (urllib.error.URLError, OSError): return False


@contextlib.contextmanager
def serve(exe:Path, gguf:Path, threads:int=2, parallel:int=4, ctx:int=16384, timeout:float=120., log:Path|None=None):
    """`exe` serving `gguf` as `MODEL` on a free loopback port: yields its base URL (`http://127.0.0.1:PORT/v1`).
    `parallel` slots share `ctx` tokens of KV cache; the chat template is the GGUF file's own (Jinja)."""
    port = free_port()
    log = Path(log) if log else Path(tempfile.mkstemp(prefix='llama-server-', suffix='.log')[1])
    cmd = [str(exe), '-m', str(gguf), '--host', '127.0.0.1', '--port', str(port), '--alias', MODEL, '--jinja', '--no-webui',
           '-c', str(ctx), '-np', str(parallel), '-t', str(threads), '-tb', str(threads),
           # no weight repacking: the repacked (AMX) matrix products of a -march=native build fault on a CPU that has AMX
           # where the kernel gives the process no AMX tile state (a virtual machine); the plain CPU kernels run everywhere
           '--no-repack']
    with open(log, 'wb') as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f'http://127.0.0.1:{port}'
    try:
        t0 = time.monotonic()
        while not _health(base):
            if p.poll() is not None: raise RuntimeError(f'llama-server exited with {p.returncode}: {log.read_text()[-2000:]}')
            if time.monotonic() - t0 > timeout: raise TimeoutError(f'llama-server not healthy after {timeout:.0f} s: {log.read_text()[-2000:]}')
            time.sleep(0.2)
        yield base + '/v1'
    finally:
        p.terminate()
        try: p.wait(10)
        except subprocess.TimeoutExpired: p.kill(); p.wait()


def post(base_url:str, path:str, body:dict) -> dict:
    "POST `body` as JSON to the server's own endpoint `path` (`/apply-template`, `/tokenize`: beside `/v1`, not under it)."
    root = base_url.removesuffix('/v1')
    req = urllib.request.Request(root + path, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=60) as r: return json.loads(r.read())
