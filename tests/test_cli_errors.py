"""Every mistake a user can make on the command line or in a configuration file ends in one line on stderr naming what to
change, exit status 2, and nothing written (no run folder). The mistakes are walked from the registries, not listed by hand:
every option of every registered method gets a value its options model refuses, every judge option an unknown judge, and
every method that declares its own check of a request (`register_method(check=...)`) the request that check refuses.

No judge is ever called: the run's judge is an OpenAI-compatible entry of a temporary judges file pointing at a closed port,
and every case fails before a request would be sent."""
import subprocess, sys
from pathlib import Path
import pytest
import yaml
from checkeval.cli import main
from checkeval.runs import list_methods, method_spec

ROOT = Path(__file__).resolve().parents[1]
# A benchmark each method with its own request check is run on, and the options that leave that check something to refuse:
# rocketeval on MT-Bench builds a table, so it must be told who writes the checklists (the grading judge is not a plumbing one).
CHECK_CASES = {'rocketeval': ('mt_bench', [])}
BAD_VALUES = ['{x: 1}', 'not-a-valid-value', '-7', '[[[1]]]', 'true']   # YAML: a mapping, a string, a negative number, nested lists, a boolean


@pytest.fixture
def env(tmp_path, monkeypatch):
    "A judges file with one remote judge (never reached), an empty runs folder; returns the runs folder."
    judges = tmp_path/'judges.yaml'
    judges.write_text(yaml.safe_dump({'judges': {'remote': {'backend': 'openai', 'model': 'm', 'base_url': 'http://127.0.0.1:9/v1'}}}))
    monkeypatch.setenv('CHECKEVAL_JUDGES', str(judges))
    monkeypatch.setenv('CHECKEVAL_RUNS', str(tmp_path/'runs'))
    monkeypatch.setenv('CHECKEVAL_PROGRESS', '0')
    return tmp_path/'runs'


def one_line_error(argv, runs, capsys, contains=None) -> str:
    "Run the CLI on `argv`; assert exit status 2, one line on stderr, and no run written; return that line."
    capsys.readouterr()
    try: rc = main(argv)
    except SystemExit as e: rc = e.code     # argparse's own errors
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2, (argv, rc, err[-2000:])
    assert len(lines) == 1 and lines[0].startswith('checkeval'), (argv, err[-2000:])
    assert 'Traceback' not in err
    assert not runs.exists() or not any(runs.rglob('*')), (argv, sorted(map(str, runs.rglob('*'))))
    if contains: assert contains in lines[0], (contains, lines[0])
    return lines[0]


def evaluate_args(method, benchmark='summeval', judge='remote', *options):
    return ['evaluate', '--method', method, '--benchmark', benchmark, '--judge', judge, '--limit', '2',
            *[a for o in options for a in ('-o', o)]]


@pytest.mark.parametrize('argv, contains', [
    (['evaluate', '--method', 'chekeval', '--benchmark', 'summeval'], "unknown method 'chekeval'"),
    (['evaluate', '--method', 'geval', '--benchmark', 'sumeval'], "unknown benchmark 'sumeval'"),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'gpt5'], "unknown judge 'gpt5'"),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'remote', '--dimensions', 'colour'], "unknown dimension 'colour'"),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '-o', 'max_tokns=4'], "unknown option 'max_tokns' for method geval"),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '-o', 'max_tokens'], '--option expects KEY=VALUE'),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '-o', 'limit=4'], 'pass limit= to evaluate (CLI: --limit)'),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '-o', 'api_key=sk-abcdefghijklmnopqrstuvwx'], 'environment variable'),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--limit', '0'], 'expected a positive integer'),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--limit', 'four'], 'expected a positive integer'),
    (['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--max-failure-rate', '2'], 'between 0 and 1'),
    (['evaluate', '--benchmark', 'summeval'], 'the following arguments are required: --method'),
    (['data', 'show', 'nope'], "nope"),
    # options that cannot go together (a model validator of the method's options), refused before any item is read
    (evaluate_args('checkeval', 'summeval', 'remote', 'answer=choices', 'granularity=dimension'),
     "options of method checkeval: answer='choices' needs granularity='question'"),
    (evaluate_args('checkeval', 'summeval', 'remote', 'checklist=build', 'n_min=4', 'n_max=3'), 'n_min=4 is above n_max=3'),
    (evaluate_args('keypoint', 'summeval', 'remote', 'answers=per_question', 'language=pt'),
     "options of method keypoint: answers='per_question' needs the English templates"),
    (evaluate_args('keypoint', 'legal_sts', 'remote', 'answers=per_question'), "not language='pt' (from legal_sts)"),   # language=auto → pt
])
def test_command_line_mistakes(env, capsys, argv, contains):
    one_line_error(argv, env, capsys, contains)


def test_the_issue_case_rocketeval_without_creator(env, capsys):
    "`checkeval evaluate --method rocketeval --benchmark mt_bench --judge J` without a checklist creator: one line, not a traceback."
    line = one_line_error(evaluate_args('rocketeval', 'mt_bench'), env, capsys)
    assert 'creator=<judge name>' in line and 'checklists=' in line


def test_rocketeval_grader_without_logprobs(env, capsys, tmp_path, monkeypatch):
    "normalized=True (the default) with a grader that returns no log-probabilities: one line before any checklist is written."
    judges = {'nolp': {'backend': 'openai', 'model': 'm', 'base_url': 'http://127.0.0.1:9/v1', 'supports_logprobs': False}}
    (tmp_path/'judges.yaml').write_text(yaml.safe_dump({'judges': judges}))
    one_line_error(evaluate_args('rocketeval', 'mt_bench', 'nolp', 'creator=nolp'), env, capsys, 'returns no log-probabilities; use normalized=False')


@pytest.mark.parametrize('method', list_methods())
def test_every_option_of_every_method(env, capsys, method):
    "Each option of `method`'s options model, given a value the model refuses, is one line naming the option."
    model = method_spec(method).options
    assert model.model_fields, method
    refused = 0
    for name in model.model_fields:
        for text in BAD_VALUES:
            try: model.model_validate({name: yaml.safe_load(text)})
            except Exception: break
        else: continue    # an option that takes anything (none of the values above is refused)
        one_line_error(evaluate_args(method, 'summeval', 'remote', f'{name}={text}'), env, capsys, contains=f"option '{name}' of method {method}")
        refused += 1
    assert refused >= len(model.model_fields) - 2, (method, refused, list(model.model_fields))


@pytest.mark.parametrize('method', [m for m in list_methods() if method_spec(m).judges])
def test_every_judge_option_names_a_known_judge(env, capsys, method):
    "Each judge option of `method` (its `judges=`) naming a judge that does not exist is one line, before anything runs."
    for role in method_spec(method).judges:
        one_line_error(evaluate_args(method, 'summeval', 'remote', f'{role}=no-such-judge'), env, capsys,
                       contains=f"option '{role}' of method {method}: unknown judge 'no-such-judge'")


def test_every_request_check_is_walked(env, capsys):
    "Every method that declares its own check of a request has a case here, and that case is refused in one line."
    checked = sorted(m for m in list_methods() if method_spec(m).check is not None)
    assert checked == sorted(CHECK_CASES), f'add a case to CHECK_CASES for {sorted(set(checked) - set(CHECK_CASES))}'
    for method, (benchmark, options) in CHECK_CASES.items():
        one_line_error(evaluate_args(method, benchmark, 'remote', *options), env, capsys)


@pytest.mark.parametrize('text, contains', [
    ('judges:\n  a: {backend: gpt}\n', "judges.a.backend: expected one of 'hf', 'openai', 'vllm', got 'gpt'"),
    ('judges:\n  a: {backend: openai, max_concurrency: four}\n', 'judges.a.max_concurrency: expected an integer'),
    ('judges:\n  a:\n    backend: openai\n     model: x\n', 'not valid YAML'),
    ('judges:\n  a: {backend: openai, api_key: sk-abcdefghijklmnopqrstuvwx}\n', "name it with 'api_key_env'"),
])
def test_judges_file_mistakes(env, capsys, tmp_path, monkeypatch, text, contains):
    (tmp_path/'bad.yaml').write_text(text)
    monkeypatch.setenv('CHECKEVAL_JUDGES', str(tmp_path/'bad.yaml'))
    one_line_error(['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'tiny'], env, capsys, contains)


def test_missing_judges_file(env, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv('CHECKEVAL_JUDGES', str(tmp_path/'missing.yaml'))
    one_line_error(['evaluate', '--method', 'geval', '--benchmark', 'summeval'], env, capsys, 'CHECKEVAL_JUDGES=')


@pytest.mark.parametrize('text, contains', [(None, 'no such grid file'), ('blocks:\n  - {name: x, methods: [geval]}\n', 'needs benchmarks'),
                                            ('blocks: [oops\n', 'grid')])
def test_grid_file_mistakes(env, capsys, tmp_path, monkeypatch, text, contains):
    grid = tmp_path/'grid.yaml'
    if text is not None: grid.write_text(text)
    monkeypatch.setenv('CHECKEVAL_GRID', str(grid))
    one_line_error(['reproduce', '--only', 'grid'], env, capsys, contains)


def test_console_script_exit_status(env, tmp_path):
    "The installed command, in its own process: exit status 2, one line, no traceback, no run folder."
    r = subprocess.run([sys.executable, '-m', 'checkeval.cli', 'evaluate', '--method', 'rocketeval', '--benchmark', 'mt_bench',
                        '--judge', 'remote', '--limit', '2'], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'Traceback' not in r.stderr, r.stderr[-3000:]
    assert not env.exists() or not any(env.rglob('*'))
