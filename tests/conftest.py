"""Shared helpers for the tests that run the `checkeval` command (in this process, or in a subprocess)."""
import contextlib, io, json, os, subprocess, sys, traceback, urllib.request, warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-m', 'checkeval.cli']


@pytest.fixture(scope='module')
def cli_env(tmp_path_factory):
    """Environment for CLI subprocesses: offline, no progress bars, run directories and judge cache in a fresh
    folder per test module (so the tiny model is built once per module and reruns hit the same cache)."""
    tmp = tmp_path_factory.mktemp('cli')
    return {**os.environ, 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'CHECKEVAL_PROGRESS': '0',
            'CHECKEVAL_RUNS': str(tmp/'runs'), 'CHECKEVAL_CACHE': str(tmp/'cache')}


# `checkeval ARGS` runs in the test's own process unless CHECKEVAL_TEST_SUBPROCESS=1: a subprocess pays python's start and
# the imports (torch and transformers for the tiny judge: about 4 s of CPU) once per command, the test worker once in all.
# The tests of the process itself (the console script's exit status, a closed pipe, kill -9, two processes) keep their own.
IN_PROCESS = os.environ.get('CHECKEVAL_TEST_SUBPROCESS') != '1'


@contextlib.contextmanager
def interpreter_warnings():
    "Warnings as a fresh interpreter shows them (its default filters, each printed on sys.stderr), not as pytest records them."
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for cat in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning): warnings.simplefilter('ignore', cat)
        warnings.filterwarnings('default', category=DeprecationWarning, module='__main__')
        warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: sys.stderr.write(warnings.formatwarning(msg, cat, fn, ln, line))
        yield


def checkeval_cli(args, env=None, timeout:int=600, **kw) -> subprocess.CompletedProcess:
    """`python -m checkeval.cli ARGS` from the repository root with the environment `env` (default: this one); its exit
    status, stdout and stderr as a `CompletedProcess`. In this process: `checkeval.cli.main` with `env` as os.environ, an
    empty stdin and stdout/stderr captured; an exception that escapes `main` is what the interpreter would do with it (traceback, status 1)."""
    if not IN_PROCESS:
        return subprocess.run(CLI + list(args), cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kw)
    from checkeval.cli import main
    old_env, old_cwd, old_stdin, out, err = dict(os.environ), os.getcwd(), sys.stdin, io.StringIO(), io.StringIO()
    try:
        if env is not None: os.environ.clear(); os.environ.update(env)
        os.chdir(ROOT); sys.stdin = io.StringIO('')                 # as with stdin=DEVNULL: not a terminal, nothing to read
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), interpreter_warnings():
            try: rc = main(list(args))
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
                if isinstance(e.code, str): print(e.code, file=sys.stderr)
            except Exception: traceback.print_exc(); rc = 1
    finally:
        os.environ.clear(); os.environ.update(old_env); os.chdir(old_cwd); sys.stdin = old_stdin
        urllib.request.install_opener(None)    # urlopen's opener keeps the proxies of the environment it was first built in
    return subprocess.CompletedProcess(CLI + list(args), rc, out.getvalue(), err.getvalue())


def run_cli(args, env, cmd=CLI, timeout:int=600, json_out:bool=True, returncode:int=0):
    """Run `cmd + args` from the repository root; it must exit with `returncode` (else the test fails with its stderr).

    Returns the JSON summary the command prints on its last stdout line, or the whole stdout with `json_out=False`."""
    r = (checkeval_cli(args, env, timeout) if list(cmd) == CLI else
         subprocess.run(list(cmd) + list(args), cwd=ROOT, capture_output=True, text=True, env=env, timeout=timeout))
    assert r.returncode == returncode, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]) if json_out else r.stdout


def read_run(path):
    "The records of a run directory (or of a CLI summary with a `run` path): (answers, judgments, meta, artifacts by name)."
    p = Path(path['run'] if isinstance(path, dict) else path)
    rows = lambda f: [json.loads(l) for l in (p/f).read_text().splitlines() if l.strip()]
    arts = {f.stem: json.loads(f.read_text()) for f in (p/'artifacts').glob('*.json')}
    return rows('answers.jsonl'), rows('judgments.jsonl'), json.loads((p/'meta.json').read_text()), arts


# `make test` runs pytest on two workers (pytest-xdist, `--dist loadscope --no-loadscope-reorder`): a module's tests stay
# on one worker, so its module- and session-scoped fixtures (a model, the docs site) are built once, and the slowest
# modules start first (the order below) so that both workers finish at about the same time. (`--dist loadgroup` no
# longer groups anything with pytest 9: pytest-xdist 3.8 renames a test by an attribute pytest 9 does not read.)
SLOW_FIRST = ('test_docs', 'test_smollm2_methods', 'test_smollm2_units', 'test_smollm2_openai', 'test_reproduce', 'test_checkeval_paper',
              'test_rehearsal', 'test_cli_evaluate', 'test_baselines_cli', 'test_checkeval_cli', 'test_seal_cli', 'test_cli_errors', 'test_cli_data')


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    rank = {m: i for i, m in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.stem, len(rank)))


@pytest.fixture(scope='module')
def smollm2(tmp_path_factory):
    "The built-in `smollm2` judge (SmolLM2-135M-Instruct, hf backend, CPU), loaded once per test module, with the module's own cache."
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    try: return get_judge('smollm2', cache=tmp_path_factory.mktemp('smollm2') / 'cache.sqlite', progress=False)
    except ModelFileError as e: pytest.skip(f'smollm2 is not installed: {e}')


def short_items(n=1):
    """The `n` shortest summaries of SummEval's shortest article (632 characters; the first item's has 1,876): a real model's
    tests compute every prompt token on the CPU (about 10 ms each on one thread), so they read the shortest text that has
    what they test (three sentences a summary)."""
    from checkeval.data import load_benchmark
    items = load_benchmark('summeval')
    src = min(items, key=lambda i: (len(i.source or ''), i.item_id)).source
    return sorted((i for i in items if i.source == src), key=lambda i: (len(i.output), i.item_id))[:n]


def run_method(method, benchmark, judge, tmp_path, dims, limit=1, **options):
    """`evaluate` a method with `judge` on `limit` items (SummEval's: `short_items`): (result, parsed answers). Some answer
    must parse, and every answer without a value must carry its failure reason (never a silent value)."""
    from checkeval.runs import evaluate
    items = short_items(limit) if benchmark == 'summeval' else None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        info, res = evaluate(method, benchmark, judge, limit=None if items else limit, items=items, dimensions=dims, seed=0,
                             root=tmp_path / 'runs', options=options)
    assert res.answers, 'no answers recorded'
    parsed = [a for a in res.answers if a.value is not None]
    for a in res.answers:
        if a.value is None: assert a.status and a.status != 'ok', a
    assert parsed, f'{method}: no answer of the judge parsed: {[a.status for a in res.answers][:5]}'
    return res, parsed


def check_weak_form(method, options, judge, tmp_path):
    """A weak-judge form (one request per unit or question, the reply constrained to one token): every answer the model
    gives is read as a 0/1 decision, so the method's items get scores where the one-reply lists gave none."""
    res, parsed = run_method(method, 'summeval', judge, tmp_path, ['coherence'], **options)
    asked = [a for a in res.answers if a.meta.get('stage') in ('verify', 'evaluate') or method == 'interacteval']
    assert asked and all(a.value in (0.0, 1.0) for a in asked), [a.status for a in asked if a.value is None][:3]
    assert all(j.score is not None for j in res.judgments if j.dimension == 'coherence')
