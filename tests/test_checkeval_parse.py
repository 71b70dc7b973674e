"CheckEval's yes/no answer parser against many malformed judge replies; the construction list parser against garbage."
import random, string
import pytest
from checkeval.methods.checkeval.method import parse_answers, parse_answers_detailed, parse_reply, parse_question_list, parse_filter_reply
from checkeval.core import Question

CASES = [
    # (reply, n, expected)
    ("Q1: Yes\nQ2: No\nQ3: yes", 3, [True, False, True]),
    ("1. yes\n2. no", 2, [True, False]),
    ("Q1) No\nQ2) Yes", 2, [False, True]),
    ("**Q1**: YES\n**Q2**: no", 2, [True, False]),
    ("__Q1__: *Yes*\n`Q2`: `No`", 2, [True, False]),
    ("Question 1 - no\nQuestion 2 - yes", 2, [False, True]),
    ("question 1: yes; question 2: no", 2, [True, False]),
    ("Q1: Yes, because the summary has no errors.\nQ2: No. The summary knows nothing.", 2, [True, False]),
    ("Q1: nothing\nQ2: I know", 2, [None, None]),
    ("Q1: eyes yesterday", 1, [None]),
    ("Q1: Noah and Yessica", 1, [None]),
    ("Q1: Yes\nQ1: No", 1, [None]),
    ("Q1: Yes\nQ1: yes", 1, [True]),
    ("Q1: Yes/No", 1, [None]),
    ("Q1: [Yes/No]", 1, [None]),
    ("Q1: yes or no", 1, [None]),
    ("Q1: Yes - No", 1, [None]),
    ("Yes.", 1, [True]),
    ("no", 1, [False]),
    ("Yes, because it is fine", 1, [True]),
    ("N/A", 1, [None]),
    ("Q1: N/A\nQ2: not applicable", 2, [None, None]),
    ("", 2, [None, None]),
    ("   \n  ", 1, [None]),
    (None, 2, [None, None]),
    ("Q1: yes\nQ2: no\nQ3: yes", 2, [True, False]),
    ("Q1: yes\nQ7: no", 2, [True, None]),
    ("Q0: no\nQ1: yes", 1, [True]),
    ("Here are my answers:\nQ1: yes\nQ2: no\nOverall the summary is fine, no issues.", 2, [True, False]),
    ("Q1: Does the summary focus on the topic? Yes\nQ2: Are there no major grammatical errors? No", 2, [True, False]),
    ("Questions:\nQ1: Are there no errors?\nQ2: Is it clear?\n\nAnswers:\nQ1: Yes\nQ2: No", 2, [True, False]),
    ("| Q1 | Yes |\n| Q2 | No |", 2, [True, False]),
    ("| # | Answer |\n|---|---|\n| 1 | Yes |\n| 2 | No |", 2, [True, False]),
    ('{"Q1": "yes", "Q2": "no"}', 2, [True, False]),
    ('```json\n{"Q1": "Yes", "Q2": "No"}\n```', 2, [True, False]),
    ("Yes\nNo\nYes", 3, [True, False, True]),
    ("yes, no, yes", 3, [True, False, True]),
    ("Yes", 3, [None, None, None]),
    ("Q1: Yes Q2: No Q3: Yes", 3, [True, False, True]),
    ("1. Yes 2. No 3. Yes", 3, [True, False, True]),
    ("(1) yes (2) no", 2, [True, False]),
    ("Q1: Yes. Reasons:\n1. It is coherent\n2. No issues\nQ2: No", 2, [True, False]),
    ("### Q1\nAnswer: Yes\n### Q2\nAnswer: No", 2, [True, False]),
    ("Q1: [Yes]\nQ2: [No]", 2, [True, False]),
    ("Q1: [Your Answer]\nQ2: [Your Answer]", 2, [None, None]),
    ("Q1: Yes - no errors\nQ2: No - the summary is off", 2, [True, False]),
    ("Q1: The answer is yes.", 1, [True]),
    ("1) Yes\n2) No\n3) no-one knows", 3, [True, False, None]),
    ("Q01: yes\nQ02: no", 2, [True, False]),
    ("q1 - YES\nq2 - NO", 2, [True, False]),
    ("1: Yes\n2: No", 2, [True, False]),
    ("A: yes", 1, [True]),
    ("The weather is nice", 3, [None, None, None]),
    ("Q1: Yes, no problem", 1, [True]),
    ("Q1: Yes\n\nOverall, no major issues", 1, [True]),
    ("Q2: yes", 2, [None, True]),
    ("Q1: yes\nQ2:", 2, [True, None]),
    ("- Q1: Yes\n- Q2: No", 2, [True, False]),
    ("Q1: YES!!!", 1, [True]),
    ("Q1: 'yes'\nQ2: \"no\"", 2, [True, False]),
    ("Q1: YES, Q2: NO, Q3: YES", 3, [True, False, True]),
    ("Q1 : Yes ; Q2 : No", 2, [True, False]),
    ("Q1: Y\nQ2: N", 2, [None, None]),
    ("Q1: yesno", 1, [None]),
    ("Q1: I think so, yes.", 1, [True]),
    ("Q1: Not really, no.", 1, [False]),
    ("Q1: I'm not sure", 1, [None]),
    ("Q1 Yes\nQ2 No", 2, [True, False]),
    ("Q1. Yes\nQ2. No", 2, [True, False]),
    ("Q1:\nYes\nQ2:\nNo", 2, [True, False]),
    ("<answer>Q1: yes</answer>", 1, [True]),
    ("Q1: yes\n" * 3 + "Q1: no", 1, [None]),
    ("Answers: Q1 - Yes, Q2 - Yes, Q3 - No", 3, [True, True, False]),
    ("Q1: \u2705 Yes\nQ2: \u274c No", 2, [True, False]),
]


@pytest.mark.parametrize('text,n,expected', CASES)
def test_cases(text, n, expected):
    assert parse_answers(text, n) == expected


def test_reasons():
    assert parse_answers_detailed("Q1: Yes\nQ1: No", 1) == [(None, 'conflicting duplicate')]
    assert parse_answers_detailed("Q1: yes and no", 1) == [(None, 'ambiguous')]
    assert parse_answers_detailed("Q2: yes", 2)[0] == (None, 'missing')
    assert parse_answers_detailed("Q1: maybe", 1) == [(None, 'no yes/no')]
    assert parse_answers_detailed(None, 1) == [(None, 'no reply')]
    assert parse_answers_detailed("", 1) == [(None, 'empty reply')]
    assert parse_answers_detailed("Q1: N/A", 1) == [(None, 'not applicable')]
    assert parse_reply("Yes\nNo", 2)['mode'] == 'positional'
    assert parse_reply("Q1: Yes", 1)['mode'] == 'numbered'
    assert parse_answers("Q1: yes", 0) == []


def test_random_garbage_never_raises_and_never_invents():
    rng = random.Random(0)
    alpha = string.printable + 'üé—–•？：✅'
    words = ['Q1', ':', 'yes', 'no', 'Yes.', 'No,', '1.', '2)', '\n', '**', '?', 'Question', '3', 'nothing', '(', ')', 'N/A', '-', '|', '#', '{', '"']
    for i in range(3000):
        s = ''.join(rng.choice(alpha) for _ in range(rng.randint(0, 150))) if i % 2 else ' '.join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        n = rng.randint(0, 6)
        res = parse_answers_detailed(s, n)
        assert len(res) == n
        for v, why in res:
            assert (v is None) == (why != 'ok')
            if v is not None: assert 'yes' in s.lower() or 'no' in s.lower()


def test_long_inputs_are_fast():
    import time
    t = time.time()
    parse_answers('Q1: ' + 'yes ' * 50000, 3); parse_answers('1.' * 30000, 3); parse_answers(' ' * 100000 + 'x', 3)
    assert time.time() - t < 5


def test_question_list_garbage():
    subs = ['Grammar', 'Readability']
    for junk in [None, '', '???', '{"Grammar": 5}', '{not json', 'the the the', '\x00\x01', '1-1-1. ?', '[' * 500]:
        q, f = parse_question_list(junk, subs)
        assert set(q) == set(subs) and all(isinstance(x, list) for x in q.values())
        assert sum(map(len, q.values())) == 0 and f, (junk, f)
    q, f = parse_question_list('Grammar:\n- Are verbs right?\nRandom:\n- Is it fun to read?', subs)
    assert q['Grammar'] == ['Are verbs right?', 'Is it fun to read?']   # an unknown heading does not change the current sub-dimension


def test_filter_reply_garbage():
    pool = [Question(id='a', text='Is it clear?'), Question(id='b', text='Is it short?')]
    for junk in [None, '', 'no', '{}', '[]', '{"x": []}']:
        kept, fails = parse_filter_reply(junk, pool)
        assert kept is None and fails
    kept, fails = parse_filter_reply('{"x": ["Is it clear?", "Is it new?"]}', pool)
    assert kept == {'a'} and fails == [{'reason': 'not in pool', 'text': 'Is it new?'}]
