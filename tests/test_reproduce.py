"""`checkeval reproduce`: the grid runs with papermill, reruns only what changed, fails loudly, and never spends money unasked."""
import json, os, re, subprocess, sys, time
from pathlib import Path
import pytest, yaml
from conftest import checkeval_cli

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp_path, grid, judges=None):
    env = {**os.environ, 'CHECKEVAL_RUNS': str(tmp_path/'runs'), 'CHECKEVAL_GRID': str(tmp_path/'grid.yaml'),
           'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'CHECKEVAL_JOBS': '2'}
    (tmp_path/'grid.yaml').write_text(yaml.safe_dump(grid))
    if judges is not None:
        (tmp_path/'judges.yaml').write_text(yaml.safe_dump(judges)); env['CHECKEVAL_JUDGES'] = str(tmp_path/'judges.yaml')
    return env


def _reproduce(env, *args, timeout=400):
    t0 = time.time()
    r = checkeval_cli(['reproduce', '--only', 'grid', *args], env, timeout=timeout)
    return r, time.time() - t0


GRID = {'defaults': {'notebook': 'nbs/experiments/run_method.ipynb'},
        'blocks': [{'name': 'lexical', 'notebook': 'nbs/experiments/run_lexical.ipynb', 'benchmarks': ['legal_sts'],
                    'methods': 'lexical', 'judges': 'none', 'code': ['checkeval/metaeval/lexical.py']},
                   {'name': 'plumbing', 'label': 'plumbing', 'benchmarks': ['summeval'], 'methods': ['checkeval'],
                    'judges': ['tiny'], 'limit': 2, 'dimensions': ['coherence']}]}


def _latest_run(folder):
    "The newest run under `folder` named `default` or `default--<run key>` (runs may be keyed by what determines them)."
    runs = [p for p in folder.glob('default*') if (p/'meta.json').exists()]
    return max(runs, key=lambda p: (p/'meta.json').stat().st_mtime_ns)


def test_cold_warm_and_changed_point(tmp_path):
    env = _env(tmp_path, GRID)
    r, cold = _reproduce(env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert '2 ran, 0 unchanged, 0 failed' in r.stdout
    table = r.stdout.split('time per step and grid block, slowest first:')[1]    # the time table at the end
    assert re.search(r'grid block plumbing +1 +[0-9.]+s', table) and re.search(r'grid block lexical +1 ', table), table
    assert re.search(r'step grid +[0-9.]+s', table), table
    run = _latest_run(tmp_path/'runs'/'summeval'/'checkeval'/'tiny')
    meta = json.loads((run/'meta.json').read_text())
    assert meta['n_answers'] > 0 and meta['judge']['name'] == 'tiny'
    for k in ('git', 'config_hash', 'packages', 'data', 'time'): assert k in meta     # provenance
    assert len(list((tmp_path/'runs'/'legal_sts').glob('*/none/*/judgments.jsonl'))) == 5   # five lexical metrics
    assert (ROOT/'_runs'/'summeval'/'checkeval'/'tiny'/'default.ipynb').exists()         # executed copy kept for reading
    # warm: nothing changed, nothing runs
    r, warm = _reproduce(env)
    assert r.returncode == 0 and '0 ran, 2 unchanged' in r.stdout, r.stdout[-2000:]
    assert warm < cold
    # a changed sample size reruns that grid point only
    grid = json.loads(json.dumps(GRID)); grid['blocks'][1]['limit'] = 3
    env = _env(tmp_path, grid)
    r, _ = _reproduce(env, '--only', 'plan')
    assert 'changed: config' in r.stdout, r.stdout
    r, _ = _reproduce(env)
    assert r.returncode == 0 and '1 ran, 1 unchanged' in r.stdout, r.stdout[-2000:]
    run = _latest_run(tmp_path/'runs'/'summeval'/'checkeval'/'tiny')
    assert len(json.loads((run/'meta.json').read_text())['config']['item_ids']) == 3
    # a file of the point's run changed by someone else (not meta.json): the point is no longer unchanged
    with open(run/'answers.jsonl', 'a') as f: f.write('\n')
    r, _ = _reproduce(env, '--only', 'plan')
    assert 'output changed' in r.stdout, r.stdout


def test_missing_method_fails_loudly(tmp_path):
    "An unknown method is reported before any notebook runs: one line, exit code 2."
    grid = {'blocks': [{'name': 'x', 'benchmarks': ['summeval'], 'methods': ['no_such_method'], 'judges': ['tiny'], 'limit': 1}]}
    r, _ = _reproduce(_env(tmp_path, grid))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "block 'x': unknown method 'no_such_method'" in r.stderr and 'Traceback' not in r.stderr
    assert '[grid]' not in r.stdout and not (tmp_path/'runs'/'summeval').exists()


@pytest.mark.parametrize('text, expected', [
    ('blocks:\n  plumbing: {benchmarks: [summeval], methods: [geval], judges: [tiny]}\n', 'blocks: expected a list of blocks'),
    ('blocks:\n  - {name: a, benchmarks: [summeval], methods: [geval], judges: [tiny], limit: four}\n',
     "blocks.0.limit: expected a positive integer, got 'four'"),
    ('blocks:\n  - {name: a, benchmarks: [summeval], methods: [geval], judges: [tiny\n', 'not valid YAML'),
    ('blocks:\n  - {name: a, benchmarks: [summeval], methods: [geval, checkeval], judges: [tiny, gpt-9], limit: 2}\n',
     "block 'a': unknown judge 'gpt-9'"),
    ('blocks:\n  - {name: a, benchmarks: [sumeval], methods: [geval], judges: [tiny], limit: 2}\n', "unknown benchmark 'sumeval'"),
], ids=['blocks-mapping', 'limit-word', 'yaml-syntax', 'unknown-judge', 'unknown-benchmark'])
def test_grid_mistakes_are_one_line_before_anything_runs(tmp_path, text, expected):
    env = _env(tmp_path, {})
    (tmp_path/'grid.yaml').write_text(text)
    for step in ('grid', 'plan'):
        r, t = _reproduce(env, '--only', step, timeout=120)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and str(tmp_path/'grid.yaml') in lines[0], r.stderr
        assert '<unicode string>' not in r.stderr and r.stdout == ''


def test_kernel_shutdown_sends_no_interrupt(monkeypatch):
    "jupyter_client interrupts a kernel before shutting it down; papermill's kernels are idle then, and the SIGINT logs an ERROR line."
    import asyncio
    from jupyter_client.manager import AsyncKernelManager
    from checkeval.reproduction.execution import kernel_manager_class
    calls = []
    orig = AsyncKernelManager._async_interrupt_kernel
    async def counting(self): calls.append(1); return await orig(self)
    monkeypatch.setattr(AsyncKernelManager, '_async_interrupt_kernel', counting)
    async def go():
        km = kernel_manager_class()(kernel_name='python3')
        await km.start_kernel()
        try:
            kc = km.client(); kc.start_channels(); await kc.wait_for_ready(timeout=60)
            await km._async_interrupt_kernel()      # an interrupt asked for while running is still sent
            assert len(calls) == 1
            kc.stop_channels()
        finally: await km.shutdown_kernel()
    asyncio.run(go())
    assert len(calls) == 1, 'shutdown_kernel interrupted the kernel'


def test_papermill_run_log_has_no_error_lines(tmp_path):
    "A successful papermill run through the runner's kernel manager leaves no ERROR line from the kernel."
    import nbformat, papermill as pm
    from checkeval.reproduction.execution import kernel_manager_class
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('import time\nx = 1')])
    nb.metadata['kernelspec'] = {'name': 'python3', 'language': 'python', 'display_name': 'python3'}
    src = tmp_path/'a.ipynb'; nbformat.write(nb, src)
    code = ('import papermill as pm, sys\nfrom checkeval.reproduction.execution import kernel_manager_class\n'
            f'for i in range(3): pm.execute_notebook({str(src)!r}, {str(tmp_path/"b.ipynb")!r}, progress_bar=False, '
            'kernel_manager_class=kernel_manager_class())\n')
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'ERROR' not in r.stderr and 'KeyboardInterrupt' not in r.stderr, r.stderr[-2000:]


def test_paid_point_needs_confirmation(tmp_path):
    judges = {'judges': {'paid-judge': {'backend': 'openai', 'model': 'some-model', 'base_url': 'http://127.0.0.1:9/v1',
                                        'api_key_env': 'CHECKEVAL_TEST_NO_KEY', 'price_in': 2.5, 'price_out': 10.0}}}
    grid = {'blocks': [{'name': 'paid', 'benchmarks': ['summeval'], 'methods': ['checkeval'], 'judges': ['paid-judge'],
                        'limit': 2, 'dimensions': ['coherence']}]}
    env = _env(tmp_path, grid, judges)
    r, t = _reproduce(env, timeout=120)     # stdin is not a terminal: refuse, never wait for an answer
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'estimated cost up to $' in r.stdout and 'REFUSED: summeval/checkeval/paid-judge' in r.stdout, r.stdout
    assert not (tmp_path/'runs'/'summeval'/'checkeval'/'paid-judge').exists()


def _make(tmp, *args):
    return subprocess.run(['make', '-C', str(tmp), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not __import__('shutil').which('make'), reason='needs make')
def test_install_stamp_is_keyed_by_content(tmp_path):
    "`make` after nbdev-export (same pyproject.toml bytes, new time) does not reinstall; a changed pyproject.toml does."
    import shutil
    for f in ('Makefile', 'pyproject.toml', 'requirements-model.txt'): shutil.copy(ROOT/f, tmp_path/f)
    dry = _make(tmp_path, '-n', 'install').stdout
    stamp = [l.split()[-1] for l in dry.splitlines() if l.startswith('touch ')][-1]
    (tmp_path/stamp).parent.mkdir(parents=True, exist_ok=True); (tmp_path/stamp).touch()
    assert _make(tmp_path, '-q', 'install').returncode == 0
    later = time.time() + 100
    os.utime(tmp_path/'pyproject.toml', (later, later))            # what nbdev-export does to it
    assert _make(tmp_path, '-q', 'install').returncode == 0, 'a new modification time alone must not reinstall'
    (tmp_path/'pyproject.toml').write_text((tmp_path/'pyproject.toml').read_text() + '\n# changed\n')
    assert _make(tmp_path, '-q', 'install').returncode != 0, 'changed content must reinstall'
    lines = _make(tmp_path, '-n', 'install').stdout.splitlines()
    assert any('-r requirements-model.txt' in l for l in lines) and any("-e '.[dev]'" in l for l in lines)


@pytest.mark.skipif(not __import__('shutil').which('make'), reason='needs make')
def test_lab_allows_root_only_as_root(tmp_path):
    import shutil
    for f in ('Makefile', 'pyproject.toml', 'requirements-model.txt'): shutil.copy(ROOT/f, tmp_path/f)
    cmd = [l for l in _make(tmp_path, '-n', 'lab').stdout.splitlines() if 'jupyter lab' in l][0]
    assert ('--allow-root' in cmd) == (os.getuid() == 0), cmd


def test_dataset_outputs_are_byte_identical_when_rebuilt(tmp_path):
    """The datasets step rebuilt over unchanged data: every file (CSV, Markdown, provenance, PNG, PDF) byte-identical to the one
    committed under figures/ (built by an earlier run, at another time, so a time stamp or a commit in a file would differ)."""
    code = ('import sys\nfrom checkeval.reproduction.reporting import write_dataset_outputs\n'
            'write_dataset_outputs(sys.argv[1])\n')
    r = subprocess.run([sys.executable, '-c', code, str(tmp_path/'a')], capture_output=True, text=True, timeout=300, cwd=ROOT,
                       env={**os.environ, 'HF_HUB_OFFLINE': '1'})
    assert r.returncode == 0, r.stderr[-2000:]
    files = sorted(f.relative_to(tmp_path/'a') for f in (tmp_path/'a').rglob('*') if f.is_file())
    assert any(str(f).endswith('.png') for f in files) and any(str(f).endswith('.provenance.json') for f in files)
    tracked = set(subprocess.run(['git', 'ls-files', 'figures'], capture_output=True, text=True, cwd=ROOT).stdout.split())
    assert {f'figures/{f.as_posix()}' for f in files} <= tracked, 'the datasets step wrote a file that is not committed'
    differ = [str(f) for f in files if (tmp_path/'a'/f).read_bytes() != (ROOT/'figures'/f).read_bytes()]
    assert not differ, differ
    prov = json.loads((tmp_path/'a'/'tables'/'datasets.provenance.json').read_text())
    assert 'time' not in prov and 'git' not in prov and prov['config'] == {'step': 'datasets'}
