"`checkeval evaluate --method geval|seeval|likert` end to end with the tiny judge (plumbing): records, failures as nulls, samples, cache."

import pytest

from conftest import checkeval_cli, run_cli, read_run


@pytest.mark.parametrize('method,benchmark,dims,extra', [
    ('geval', 'summeval', ['coherence', 'fluency'], ['-o', 'n=2', '-o', 'temperature=1.0']),
    ('seeval', 'topical_chat', ['groundedness'], ['-o', 'max_tokens=12']),
])
def test_rating_methods(cli_env, method, benchmark, dims, extra):
    args = ['evaluate', '--method', method, '--benchmark', benchmark, '--judge', 'tiny', '--limit', '2', '--dimensions', *dims] + extra
    out = run_cli(args, cli_env)
    answers, judgments, meta, arts = read_run(out['run'])
    n = 2 if method == 'geval' else 1
    assert len(answers) == 2 * len(dims) * n and len(judgments) == 2 * len(dims)
    assert {a['question_id'] for a in answers} == {f'sample-{k}' for k in range(n)}
    for a in answers:
        assert a['method'] == method and a['judge'] == 'tiny' and a['prompt_tokens'] > 0 and len(a['cache_key']) == 64 and a['latency_s'] is not None
        lo, hi = a['meta']['scale']
        if a['status'] == 'ok': assert lo <= a['value'] <= hi
        else: assert a['value'] is None and a['status']
    if method == 'geval':   # distinct samples are distinct requests (different cache keys)
        keys = {(a['item_id'], a['dimension']): set() for a in answers}
        for a in answers: keys[(a['item_id'], a['dimension'])].add(a['cache_key'])
        assert all(len(v) == 2 for v in keys.values())
    for j in judgments:
        ok = [a['value'] for a in answers if a['item_id'] == j['item_id'] and a['dimension'] == j['dimension'] and a['status'] == 'ok']
        assert j['n_answered'] == len(ok) and j['meta']['mean_of_samples'] == (sum(ok) / len(ok) if ok else None)
    assert set(arts['parse_failures']) == {f'tiny|{d}' for d in dims}
    again = run_cli(args, cli_env)
    # every request comes from the cache the second time; one request per answer (SEEval's explanation and rating are one reply)
    assert again['usage']['sent'] == 0 and again['usage']['cached'] == again['usage']['requests'] == len(answers)


def test_geval_upstream_prompts(cli_env):
    "The paper grid's G-Eval: the released prompts (SummEval fluency on their own 1–3 scale), temperature 0, n=1, 20 tokens."
    args = ['evaluate', '--method', 'geval', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1', '--dimensions', 'fluency',
            '-o', 'prompt_source=upstream']
    answers, _, _, arts = read_run(run_cli(args, cli_env))
    assert [a['meta']['scale'] for a in answers] == [[1.0, 3.0]] and answers[0]['meta']['prompt_source'] == 'upstream'
    s = arts['settings']
    assert (s['temperature'], s['n'], s['max_tokens']) == (0.0, 1, 20) and 'released with CheckEval' in s['prompts']


def test_seeval_explains_in_500_tokens(cli_env):
    "SEEval's explanation has the 500 tokens of the paper (and of SEEval's original implementation)."
    args = ['evaluate', '--method', 'seeval', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1', '--dimensions', 'coherence']
    _, _, _, arts = read_run(run_cli(args, cli_env))
    assert arts['settings']['max_tokens'] == 500


@pytest.mark.parametrize('method,option,words', [('seeval', 'prompt_source=upstream', 'not released'),
                                                 ('geval', 'prompt_source=authors', 'prompt_source')])
def test_rating_option_errors(cli_env, method, option, words):
    "SEEval's prompts are not in the mirror, a bad option value: one line, no traceback."
    args = ['evaluate', '--method', method, '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1', '--dimensions', 'coherence', '-o', option]
    r = checkeval_cli(args, cli_env)
    assert r.returncode != 0 and words in r.stderr and 'Traceback' not in r.stderr, r.stderr[-2000:]
