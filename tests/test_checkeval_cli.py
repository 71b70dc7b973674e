"`checkeval evaluate --method checkeval` end to end with the tiny judge (plumbing): records, failures as nulls, cache, construction."
import json
import pytest

from conftest import checkeval_cli, run_cli, read_run


def check_answers(answers):
    for a in answers:
        assert a['method'] == 'checkeval' and a['judge'] == 'tiny' and a['question_id'] and a['meta']['question']
        assert a['prompt_tokens'] > 0 and a['completion_tokens'] is not None and a['latency_s'] is not None and len(a['cache_key']) == 64
        if a['status'] == 'ok': assert a['value'] in (0.0, 1.0)
        else: assert a['value'] is None and a['status']      # a failure is a null with its reason, never a "no"


def test_summeval_records_and_resume(cli_env):
    args = ['evaluate', '--method', 'checkeval', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '2',
            '--dimensions', 'coherence', 'fluency', '-o', 'stage=seed', '-o', 'max_tokens=6']
    out = run_cli(args, cli_env)
    answers, judgments, meta, arts = read_run(out['run'])
    assert len(answers) == 2 * (3 + 4) == out['answers']
    check_answers(answers)
    assert {a['sub_dimension'] for a in answers if a['dimension'] == 'fluency'} == {'Formatting', 'Grammar', 'Completeness', 'Readability'}
    assert len(judgments) == 4
    for j in judgments:
        ok = [a['value'] for a in answers if a['item_id'] == j['item_id'] and a['dimension'] == j['dimension'] and a['status'] == 'ok']
        # the released aggregation.py: the yes-ratio of the answers read, 0 where none was read (said in the judgment)
        assert j['n_answered'] == len(ok) and j['score'] == (sum(ok) / len(ok) if ok else 0.0)
        assert ok or 'released aggregation.py' in j['meta']['score_rule']
        assert j['n_questions'] == {'coherence': 3, 'fluency': 4}[j['dimension']]
    pf = arts['parse_failures']
    assert set(pf) == {'tiny|coherence', 'tiny|fluency'}
    assert pf['tiny|fluency']['n_answers'] == 8 and 0 <= pf['tiny|fluency']['failure_rate'] <= 1
    assert meta['parse_failure_rate'] == sum(a['status'] != 'ok' for a in answers) / len(answers)
    assert set(arts['checklists']) == {'coherence', 'fluency'}
    assert meta['usage']['requests'] == 2 * (3 + 4) == meta['usage']['sent']   # one prompt per sub-dimension
    # a second identical run makes no new judge call and writes the same records
    again = run_cli(args, cli_env)
    assert again['usage']['sent'] == 0 and again['usage']['cached'] == again['usage']['requests'] > 0
    answers2, *_ = read_run(again['run'])
    assert [(a['cache_key'], a['value'], a['status']) for a in answers2] == [(a['cache_key'], a['value'], a['status']) for a in answers]


def test_topical_chat_build_fails_on_unread_filter(cli_env):
    "tiny's filter reply cannot be read: the build fails in one line (no silent fall-back to the unfiltered pool)."
    args = ['evaluate', '--method', 'checkeval', '--benchmark', 'topical_chat', '--judge', 'tiny', '--limit', '1',
            '--dimensions', 'naturalness', '-o', 'checklist=build', '-o', 'builder=tiny', '-o', 'build_max_tokens=8', '-o', 'max_tokens=6']
    r = checkeval_cli(args, cli_env)
    assert r.returncode != 0 and 'could not be read' in r.stderr and 'Traceback' not in r.stderr, r.stderr[-2000:]


def test_build_entry_point(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv('HF_HUB_OFFLINE', '1'); monkeypatch.setenv('CHECKEVAL_PROGRESS', '0')
    from checkeval.judges import get_judge
    from checkeval.methods.checkeval.method import build_main, load_checklist
    with pytest.raises(ValueError, match='make_judge'): build_main(['--benchmark', 'summeval', '--judge', 'tiny', '--dimensions', 'relevance', '--out', 'x'])
    args = ['--benchmark', 'summeval', '--judge', 'tiny', '--dimensions', 'relevance', '--out', str(tmp_path/'built'), '--max-tokens', '8']
    with pytest.raises(Exception, match='could not be read'): build_main(args, get_judge)
    assert build_main(args + ['--keep-unfiltered'], get_judge) == 0
    assert 'removed by filter' in capsys.readouterr().out
    cl = load_checklist(tmp_path/'built'/'relevance.yaml')
    assert cl.dimension.name == 'relevance' and cl.stage_counts().get('seed') == 5
    rep = json.loads((tmp_path/'built'/'construction.json').read_text())
    assert set(rep['dimensions']['relevance']) >= {'seed', 'diversification', 'elaboration', 'pool', 'filter', 'final', 'counts'}
    assert rep['dimensions']['relevance']['filter']['status'] == 'failed'


@pytest.mark.parametrize('option,words', [('granularity=paragraph', "option 'granularity' of method checkeval: expected"),
                                          ('filtr=true', "unknown option 'filtr' for method checkeval"),
                                          ('prompt_source=upstream', 'downloads are disabled')])
def test_option_errors_are_one_line(cli_env, option, words):
    """A bad option, or the authors' evaluation template in neither the cache (a fresh one) nor the mirror, with downloads
    forbidden (CHECKEVAL_OFFLINE: no network in the tests): one line on stderr, no traceback."""
    args = ['evaluate', '--method', 'checkeval', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1', '--dimensions', 'coherence', '-o', option]
    r = checkeval_cli(args, {**cli_env, 'CHECKEVAL_OFFLINE': '1'})
    errors = [l for l in r.stderr.splitlines() if 'error' in l]      # (progress bars of the judge's build aside)
    assert r.returncode != 0 and words in r.stderr and 'Traceback' not in r.stderr and len(errors) == 1, r.stderr[-2000:]
