"""`checkeval evaluate` as a new user meets it: bad values are one line, a paid judge asks first, a run whose
requests all fail exits non-zero with its reasons, a run's folder is keyed by what determines its answers, and
concurrent writers of one run take turns and add up their usage."""
import json, os, subprocess, sys, textwrap, time
from pathlib import Path

import pytest

from conftest import ROOT, checkeval_cli, run_cli, read_run

EVAL = ['evaluate', '--method', 'checkeval', '--benchmark', 'summeval', '--judge', 'tiny', '--dimensions', 'coherence',
        '-o', 'stage=seed', '-o', 'max_tokens=4']


def run(args, env, **kw):
    return checkeval_cli(args, env, **kw)


def one_line_error(r, *needles):
    "Exit 2, one line on stderr starting `checkeval: error:`, no traceback, naming every needle."
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [l for l in r.stderr.strip().splitlines() if '%|' not in l]   # the tiny model's one-time build shows a progress bar
    assert len(lines) == 1 and lines[0].startswith('checkeval: error: ') and 'Traceback' not in r.stderr, r.stderr
    for n in needles: assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize('limit', ['-3', '0', 'four', '2.5'])
def test_limit_must_be_a_positive_integer(cli_env, limit):
    r = run(EVAL + ['--limit', limit], cli_env)
    one_line_error(r, '--limit', 'positive integer', repr(limit))
    assert not Path(cli_env['CHECKEVAL_RUNS']).exists() or not list(Path(cli_env['CHECKEVAL_RUNS']).rglob('meta.json'))


def test_library_refuses_negative_and_zero_limit():
    from checkeval.runs import evaluate, OptionError
    for bad in (-3, 0):
        with pytest.raises(OptionError, match='positive integer'):
            evaluate('checkeval', 'summeval', 'tiny', limit=bad, save=False)


@pytest.mark.parametrize('extra, needles', [
    (['-o', 'limit=four'], ["option 'limit'", 'positive integer', "'four'"]),
    (['-o', 'max_tokens=lots'], ["option 'max_tokens'", 'positive integer']),
    (['-o', 'temperature=hot'], ["option 'temperature'", 'number']),
    (['-o', 'limit=4'], ["'limit'", '--limit']),
    (['-o', 'api_key=sk-abcdefghijklmnopqrstuvwx'], ['api_key', 'environment']),
    (['-o', 'granularity'], ['KEY=VALUE']),
    (['-o', 'no_such_option=1'], ['no_such_option']),
])
def test_option_mistakes_are_one_line(cli_env, extra, needles):
    one_line_error(run(EVAL + ['--limit', '1'] + extra, cli_env), *needles)


@pytest.mark.parametrize('flag, value, kind, known', [('--method', 'chekeval', 'method', 'checkeval'),
                                                       ('--benchmark', 'sumeval', 'benchmark', 'summeval'),
                                                       ('--judge', 'gpt5', 'judge', 'tiny')])
def test_unknown_names_are_one_line(cli_env, flag, value, kind, known):
    names = {'--method': 'checkeval', '--benchmark': 'summeval', '--judge': 'tiny', flag: value}
    args = ['evaluate', '--limit', '1'] + [x for kv in names.items() for x in kv]
    one_line_error(run(args, cli_env), f'unknown {kind} {value!r}', known)


def test_api_key_in_judges_file_is_one_line(cli_env, tmp_path):
    cfg = tmp_path/'judges.yaml'
    cfg.write_text('judges:\n  leaky:\n    backend: openai\n    model: m\n    base_url: http://127.0.0.1:9/v1\n    api_key: sk-abcdefghijklmnopqrstuvwx\n')
    one_line_error(run(EVAL + ['--limit', '1', '--judge', 'leaky'], {**cli_env, 'CHECKEVAL_JUDGES': str(cfg)}), str(cfg), 'api_key')


def test_a_bug_still_shows_a_traceback(monkeypatch, capsys):
    from checkeval import cli
    def boom(args): raise TypeError('a bug')
    monkeypatch.setattr(cli, 'cmd_data', boom)
    with pytest.raises(TypeError): cli.main(['data', 'list'])


def test_help_lists_names_steps_and_version(cli_env):
    h = run(['evaluate', '--help'], cli_env).stdout
    for name in ('checkeval', 'rocketeval', 'interacteval', 'summeval', 'topical_chat', 'mt_bench', 'tiny', 'smollm2', '--max-failure-rate', '0.5'):
        assert name in h, name
    h = run(['reproduce', '--help'], cli_env).stdout
    from checkeval.reproduction.reproduce import STEPS
    for step in STEPS: assert step in h, step
    v = run(['--version'], cli_env)
    from importlib.metadata import version
    assert v.returncode == 0 and v.stdout.strip() == f"checkeval {version('checkeval')}"


# ---------------------------------------------------------------- a paid judge, an unreachable endpoint

@pytest.fixture
def paid_env(cli_env, tmp_path):
    cfg = tmp_path/'judges.yaml'
    cfg.write_text(textwrap.dedent('''\
        judges:
          paid-down:
            backend: openai
            model: some-model
            base_url: http://127.0.0.1:9/v1
            api_key_env: CHECKEVAL_TEST_KEY
            price_in: 2.5
            price_out: 10
            max_retries: 0
            timeout: 3
            preflight: false
          paid-down-checked:
            backend: openai
            model: some-model
            base_url: http://127.0.0.1:9/v1
            api_key_env: CHECKEVAL_TEST_KEY
            price_in: 2.5
            price_out: 10
        '''))
    return {**cli_env, 'CHECKEVAL_JUDGES': str(cfg), 'CHECKEVAL_TEST_KEY': 'dummy', 'CHECKEVAL_RUNS': str(tmp_path/'runs')}


def test_paid_judge_without_terminal_is_refused(paid_env):
    args = ['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'paid-down', '--limit', '2', '--dimensions', 'coherence']
    r = run(args, paid_env)
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert 'estimated up to $' in r.stderr and 'requests to send' in r.stderr      # the dry-run estimate is shown
    assert r.stderr.strip().splitlines()[-1].startswith('checkeval: error: ') and '--yes' in r.stderr
    assert not (Path(paid_env['CHECKEVAL_RUNS'])).exists() or not list(Path(paid_env['CHECKEVAL_RUNS']).rglob('meta.json'))


def test_every_request_failed_exits_non_zero_with_reasons(paid_env, tmp_path):
    "A server that answers every request with HTTP 500: the failures are recorded with their reason, exit 1."
    from checkeval.testing.server import ChatServer
    cfg = Path(paid_env['CHECKEVAL_JUDGES'])
    with ChatServer(fault_rate=1.0, faults=['500']) as s:
        cfg.write_text(cfg.read_text().replace('http://127.0.0.1:9/v1', s.url, 1))
        args = ['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'paid-down', '--limit', '2', '--dimensions', 'coherence', '--yes']
        r = run(args, paid_env)
    assert r.returncode == 1, r.stderr[-2000:]
    assert 'Traceback' not in r.stderr and 'every request failed' in r.stderr and 'checkeval: failures: ' in r.stderr and 'HTTP 500' in r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out['answered'] == 0 and out['errors'] == out['answers'] == 2 and out['error_reasons']
    assert out['missing_rule'] == {'name': 'unread sample left out of the mean', 'answers': 2, 'unread': 2, 'no_logprob': 0}
    assert "checkeval: missing answers: rule 'unread sample left out of the mean' decided 2 of 2 answers (2 unread)" in r.stderr
    answers, _, meta, _ = read_run(out['run'])            # the records are kept: the failures are data
    assert all(a['status'].startswith('judge error') for a in answers)


def test_a_down_server_stops_the_run_before_any_request(paid_env):
    "With the check before a run (the default), a server where nothing listens is one line, exit 2 and no run folder."
    args = ['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'paid-down-checked', '--limit', '2', '--dimensions', 'coherence', '--yes']
    r = run(args, paid_env)
    assert r.returncode == 2, r.stderr[-2000:]
    assert 'Traceback' not in r.stderr and "nothing answers at http://127.0.0.1:9/v1" in r.stderr and 'hint' not in r.stderr
    assert not list(Path(paid_env['CHECKEVAL_RUNS']).rglob('answers.jsonl'))


def test_failure_share_threshold(cli_env):
    from checkeval.cli import run_outcome
    s = dict(answers=10, answered=6, parsed=6, errors=4, error_share=0.4, error_reasons=[['HTTP 500', 4]], unparsed_reasons=[], cached=0, requests=10)
    assert run_outcome(s)[0] == 0 and run_outcome(s, 0.3)[0] == 1
    r = run(EVAL + ['--limit', '1', '--max-failure-rate', '2'], cli_env)
    one_line_error(r, '--max-failure-rate', 'between 0 and 1')


# ---------------------------------------------------------------- run identity

def test_adhoc_run_does_not_overwrite_grid_run_and_same_request_reuses(cli_env):
    from checkeval.runs import run_path
    base = ['evaluate', '--method', 'checkeval', '--benchmark', 'summeval', '--judge', 'tiny', '--dimensions', 'coherence', '-o', 'stage=seed']
    four = run_cli(base + ['--limit', '4'], cli_env)
    two = run_cli(base + ['--limit', '2'], cli_env)
    again = run_cli(base + ['--limit', '4'], cli_env)
    assert two['run'] != four['run'] and again['run'] == four['run']
    assert Path(four['run']).parent == Path(two['run']).parent       # same benchmark/method/judge, two runs side by side
    assert len(read_run(four)[0]) == 4*3 and len(read_run(two)[0]) == 2*3      # neither was overwritten by the other
    os.environ['CHECKEVAL_RUNS'] = cli_env['CHECKEVAL_RUNS']
    try:
        assert str(run_path('checkeval', 'summeval', 'tiny', limit=4, dimensions=['coherence'], options={'stage': 'seed'})) == four['run']
        assert str(run_path('checkeval', 'summeval', 'tiny', limit=4, seed=1, dimensions=['coherence'], options={'stage': 'seed'})) != four['run']
    finally: del os.environ['CHECKEVAL_RUNS']
    meta = read_run(four)[2]
    from checkeval.runs import run_checksums
    assert meta['checksums'] == run_checksums(four['run']) and 'answers.jsonl' in meta['checksums']


SLOW = textwrap.dedent('''\
    import sys, time
    from checkeval.core import Item
    from checkeval.judges import FunctionJudge, JudgeRequest
    from checkeval.runs import MethodOptions, MethodResult, evaluate, make_answer, register_method
    @register_method('_slow', options=MethodOptions)
    def slow(items, judge, dims, **o):
        rs = judge.generate([JudgeRequest(messages=[{'role': 'user', 'content': it.output}], max_tokens=4) for it in items])
        time.sleep(1.5)
        return MethodResult(answers=[make_answer(r, value=1.0, benchmark='own', item_id=it.item_id, system_id='s', method='_slow',
                                                 judge=judge.name, dimension='d') for r, it in zip(rs, items)])
    items = [Item(benchmark='own', item_id=str(i), group_id='g', system_id='s', output=f'text {i}') for i in range(3)]
    info, _ = evaluate('_slow', 'own', FunctionJudge(lambda r: 'yes', name='scripted', cache=True), items=items, dimensions=['d'])
    print(info.path)
    ''')


def test_concurrent_writers_take_turns_and_usage_sums(tmp_path):
    env = {**os.environ, 'CHECKEVAL_RUNS': str(tmp_path/'runs'), 'CHECKEVAL_CACHE': str(tmp_path/'cache'), 'CHECKEVAL_PROGRESS': '0'}
    procs = [subprocess.Popen([sys.executable, '-c', SLOW], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-1500:] for o in outs]
    paths = {o[0].strip() for o in outs}
    assert len(paths) == 1
    assert any('waiting for another process' in o[1] for o in outs)   # the second writer waited for the first
    meta = json.loads((Path(paths.pop())/'meta.json').read_text())
    assert len(meta['writers']) == 2
    assert meta['usage']['requests'] == 6 and meta['usage']['sent'] == 3 and meta['usage']['cached'] == 3
