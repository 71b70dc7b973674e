"`checkeval data list|check|show` and the error a user sees when no data can be found."
import os, subprocess, sys
from pathlib import Path

import pytest

from checkeval import settings
from conftest import checkeval_cli

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-m', 'checkeval.cli']


def run(args, env=None, **kw):
    e = {**os.environ, 'HF_HUB_OFFLINE': '1', **(env or {})}
    return checkeval_cli(args, e, **kw)


def test_data_list_names_every_benchmark():
    r = run(['data', 'list'])
    assert r.returncode == 0, r.stderr
    for b in ('summeval', 'topical_chat', 'qags_cnndm', 'qags_xsum', 'hanna', 'legal_sts', 'sfres', 'sfhot', 'newsroom', 'ellipse', 'mt_bench'):
        assert b in r.stdout, b
    wide = run(['data', 'list', '--wide'])
    assert wide.returncode == 0 and 'https://raw.githubusercontent.com/' in wide.stdout and 'sha256' in wide.stdout


def test_data_list_fits_a_terminal():
    r = run(['data', 'list'], env={'COLUMNS': '100'})
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) > 100 and max(map(len, lines)) <= 100
    assert '…' in r.stdout                                         # long paths are cut, not wrapped
    r = run(['data', 'list'], env={'COLUMNS': ''})                  # not a terminal, no COLUMNS: 100
    assert max(map(len, r.stdout.splitlines())) <= 100
    wide = run(['data', 'list', '--wide'], env={'COLUMNS': '100'})
    assert max(map(len, wide.stdout.splitlines())) > 200 and '…' not in wide.stdout.split('\n')[0]


def test_data_list_survives_a_closed_pipe():
    r = subprocess.run(' '.join(CLI) + ' data list | head -2', shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, 'HF_HUB_OFFLINE': '1'})
    assert len(r.stdout.splitlines()) == 2
    assert 'Traceback' not in r.stderr and 'BrokenPipeError' not in r.stderr, r.stderr
    assert r.stderr == ''


def test_data_list_json_does_not_escape_slashes():
    r = run(['data', 'list', '--format', 'json'])
    assert r.returncode == 0 and '\\/' not in r.stdout
    import json
    rows = json.loads(r.stdout)
    assert rows[0]['path'].count('/') >= 1 and any((x['url'] or '').startswith('https://') for x in rows)


def test_data_check_verifies_every_file(tmp_path):
    """Every file of the mirror is verified; a catalogued file the mirror lacks (the project's own source list, e.g. the
    CheckEval authors' inference code) is reported missing with the URL it would come from, and the command fails."""
    from checkeval.data import PROJECT_SOURCES, mirror_dir
    lacking = {e['file'] for e in PROJECT_SOURCES if not (mirror_dir()/e['file']).is_file()}
    r = run(['data', 'check', '--quiet', '--format', 'json'], env={'CHECKEVAL_CACHE': str(tmp_path), 'CHECKEVAL_OFFLINE': '1'})
    assert r.returncode == (1 if lacking else 0), r.stderr[-2000:]
    import json
    rows = json.loads(r.stdout)
    assert len(rows) >= 100 and all(x['status'] == 'ok' for x in rows if x['path'] not in lacking)
    assert {x['path']: x['status'] for x in rows if x['path'] in lacking} == dict.fromkeys(lacking, 'missing')
    assert all('would download from https://raw.githubusercontent.com/' in x['detail'] for x in rows if x['path'] in lacking)
    assert f'{len(rows) - len(lacking)}/{len(rows)} files verified' in r.stderr


def test_data_show_items():
    r = run(['data', 'show', 'summeval', '-n', '2', '--format', 'json'])
    assert r.returncode == 0, r.stderr
    import json
    rows = json.loads(r.stdout)
    assert len(rows) == 2 and rows[0]['group_id'] == rows[1]['group_id']


def test_empty_mirror_no_network_names_dataset_and_url(tmp_path):
    empty = tmp_path / 'empty'; empty.mkdir()
    env = {'CHECKEVAL_DATA_MIRROR': str(empty), 'CHECKEVAL_CACHE': str(tmp_path / 'cache'),
           'CHECKEVAL_DOWNLOAD_TIMEOUT': '5', 'http_proxy': 'http://127.0.0.1:9', 'https_proxy': 'http://127.0.0.1:9',
           'HTTP_PROXY': 'http://127.0.0.1:9', 'HTTPS_PROXY': 'http://127.0.0.1:9'}
    r = run(['data', 'show', 'summeval'], env=env)
    assert r.returncode == 2
    err = r.stderr
    assert 'Traceback' not in err
    assert 'summeval' in err and 'https://' in err, err
    # nothing half-downloaded is left in the cache
    leftovers = [p for p in (tmp_path / 'cache').rglob('*') if p.is_file() and p.name != '.verified.json']
    assert leftovers == []


def test_unknown_benchmark_is_a_clear_error():
    r = run(['data', 'show', 'no_such_benchmark'])
    assert r.returncode == 2 and 'no_such_benchmark' in r.stderr and 'Traceback' not in r.stderr


@pytest.mark.skipif(not ((settings.mirror_dir() or Path('/nonexistent'))/'sources-responses.json').is_file(), reason='no data mirror')
def test_data_list_and_show_the_response_benchmarks():
    import json
    rows = json.loads(run(['data', 'list', '--format', 'json']).stdout)
    resp = [x for x in rows if x['role'] == 'responses']
    assert {x['dataset'] for x in resp} == {'alpacaeval', 'arena_hard', 'mt_bench_responses'} and len(resp) == 53
    assert all(x['model'] and x['split'] in ('train', 'test') and x['sha256'] and x['url'] for x in resp)
    r = run(['data', 'show', 'alpacaeval', '-n', '2'])
    assert r.returncode == 0, r.stderr
    assert 'checkeval: alpacaeval: 17709 items, 805 groups, 22 systems; defects: 22 × empty output; 1 × missing response' in r.stderr
    assert 'llama-2-70b-chat has 804 of 805 responses' in r.stderr     # the loader's warning
    assert 'split' in r.stdout.splitlines()[0] and 'elo' in r.stdout.splitlines()[0]


def test_settings_lists_every_variable(tmp_path):
    import json
    r = run(['settings', '--format', 'json'], env={'CHECKEVAL_RUNS': str(tmp_path)})
    rows = {x['variable']: x for x in json.loads(r.stdout)}
    assert r.returncode == 0 and rows['CHECKEVAL_RUNS']['effective'] == str(tmp_path) and 'CHECKEVAL_WILDBENCH' in rows
