"""`checkeval evaluate --input FILE` as a researcher with a folder of system outputs meets it: a JSONL or CSV of their
own, a printed table with their ids, `scores.csv`, runs filed under the file's name (never among a paper benchmark's),
the meta-evaluation when a human-score column is mapped, `checkeval show`, and one-line errors for a bad file."""
import csv, json
from pathlib import Path

import pytest

from conftest import checkeval_cli

ARTICLES = ["The city council voted on Tuesday to build a new library beside the river park, paid for by a regional grant.",
            "A storm knocked out power to three thousand homes overnight; crews expect to restore it by noon.",
            "The local bakery won a national award for its sourdough, beating two hundred other entries.",
            "Volunteers planted four hundred trees along the old railway line, which is becoming a cycle path."]
SUMMARIES = [("The council approved a riverside library paid for by a grant.", 5), ("Library. Tuesday. River grant park.", 1),
             ("A storm cut power to 3,000 homes; repairs are due by noon.", 5)]


def rows(n):
    "`n` rows of made-up articles and summaries (three summaries of each article) with a human coherence rating."
    return [{'doc': f'd{k // 3}-{k % 3}', 'article': ARTICLES[(k // 3) % len(ARTICLES)], 'summary': SUMMARIES[k % 3][0] + ('' if k < 3 else f' ({k})'),
             'rating': SUMMARIES[k % 3][1] - (k % 2)} for k in range(n)]


@pytest.fixture(scope='module')
def env(cli_env, tmp_path_factory):
    "The CLI's environment, the judge cache fresh, the built-in models converted once for the whole machine (not once per module)."
    from checkeval.settings import models_dir
    mine = Path(cli_env['CHECKEVAL_CACHE'])/'cache'; mine.mkdir(parents=True, exist_ok=True)
    shared = models_dir(); shared.mkdir(parents=True, exist_ok=True)
    if not (mine/'models').exists(): (mine/'models').symlink_to(shared, target_is_directory=True)
    return cli_env


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp('mine')
    (d/'outputs.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows(12)))
    with open(d/'summeval.csv', 'w', newline='') as f:     # named as a paper benchmark: filed as file-summeval
        w = csv.DictWriter(f, ['item_id', 'document', 'response']); w.writeheader()
        for r in rows(4): w.writerow({'item_id': f"00{r['doc']}", 'document': r['article'], 'response': r['summary']})
    return d


def runs(env): return Path(env['CHECKEVAL_RUNS'])


def run_of(r): return Path(json.loads(r.stdout.strip().splitlines()[-1])['run'])


def test_jsonl_with_human_scores(env, files):
    "G-Eval with smollm2 on 12 rows: the table names each row's own id, scores.csv has them, the meta-evaluation is printed and written."
    r = checkeval_cli(['evaluate', '--input', str(files/'outputs.jsonl'), '--method', 'geval', '--judge', 'smollm2', '-o', 'answer=choices',
                       '--field', 'id=doc', '--field', 'score:coherence=rating'], env)   # G-Eval's weak form: smollm2 writes no free rating
    assert r.returncode == 0, r.stderr[-3000:]
    run = run_of(r)
    assert run.relative_to(runs(env)).parts[:3] == ('outputs', 'geval', 'smollm2')
    table = r.stdout.split('means')[0]
    for k in range(12): assert f'd{k // 3}-{k % 3}' in table, k
    sc = list(csv.DictReader(open(run/'scores.csv')))
    assert sorted(x['item'] for x in sc) == sorted(x['doc'] for x in rows(12)) and all(x['dimension'] == 'coherence' for x in sc)
    assert 'meta-evaluation against the human scores' in r.stdout and 'pearson' in r.stdout and 'parse rate' in r.stdout
    me = list(csv.DictReader(open(run/'metaeval.csv')))
    sample = [x for x in me if x['level'] == 'sample']
    assert len(sample) == 3 and all(x['n'] == '12' for x in sample)
    assert all(x['value'] != '' or x['note'] for x in sample)        # a number, or the reason there is none
    assert not (runs(env)/'summeval').exists()


def test_csv_named_as_a_benchmark(env, files):
    "CheckEval with smollm2 on a 4-row CSV called summeval.csv: filed as file-summeval, the per-question view printed, no correlation under 10 items."
    from checkeval.methods.checkeval.checklists import project_checklist_dir
    r = checkeval_cli(['evaluate', '--input', str(files/'summeval.csv'), '--method', 'checkeval', '--judge', 'smollm2', '--dimensions', 'coherence',
                       '-o', f"checklist={project_checklist_dir()/'summeval'}", '-o', 'stage=seed', '-o', 'granularity=question', '-o', 'answer=choices'], env)
    assert r.returncode == 0, r.stderr[-3000:]
    run = run_of(r)
    assert run.relative_to(runs(env)).parts[0] == 'file-summeval' and not (runs(env)/'summeval').exists()
    sc = list(csv.DictReader(open(run/'scores.csv')))
    assert sorted(x['item'] for x in sc) == sorted(f"00{x['doc']}" for x in rows(4))    # the file's ids, leading zeros kept
    assert 'questions (yes-rate' in r.stdout and 'coh-01' in r.stdout
    assert all(x['asked'] == '3' for x in sc)
    shown = checkeval_cli(['show', str(run)], env)
    assert shown.returncode == 0 and '00d0-0' in shown.stdout and 'yes-rate' in shown.stdout
    newest = checkeval_cli(['show', '--method', 'checkeval', '--input', str(files/'summeval.csv'), '--judge', 'smollm2'], env)
    assert newest.returncode == 0 and str(run) in newest.stdout


def one_line_error(r, *needles):
    lines = [l for l in r.stderr.strip().splitlines() if '%|' not in l]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith('checkeval: error: ') and 'Traceback' not in r.stderr, r.stderr[-2000:]
    for n in needles: assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize('name, text, fields, needles', [
    ('missing.jsonl', '{"id": "a", "article": "x", "summary": "y"}\n', ['output=summ'], ["column 'summ'", 'its columns: id, article, summary']),
    ('nooutput.csv', 'id,article\na,x\n', [], ['no output column', '--field output=COLUMN']),
    ('empty.jsonl', '', [], ['has no rows']),
    ('header.csv', 'id,output\n', [], ['has no rows']),
    ('dup.csv', 'id,output\n1,a\n2,b\n1,c\n', [], ["duplicate id '1' (rows 1 and 3"]),
    ('score.csv', 'id,output,h\n1,a,high\n', ['score:coherence=h'], ["'high', not a number (row 1)"]),
])
def test_bad_files_are_one_line(env, tmp_path, name, text, fields, needles):
    (tmp_path/name).write_text(text)
    r = checkeval_cli(['evaluate', '--input', str(tmp_path/name), '--method', 'geval', '--judge', 'tiny', '--dimensions', 'coherence',
                       *[a for f in fields for a in ('--field', f)]], env)
    one_line_error(r, name, *needles)
    assert not any(runs(env).glob(f'{Path(name).stem}/**/meta.json'))


def test_input_or_benchmark(env, files):
    one_line_error(checkeval_cli(['evaluate', '--method', 'geval', '--judge', 'tiny'], env), '--benchmark NAME', '--input FILE')
    one_line_error(checkeval_cli(['evaluate', '--method', 'geval', '--judge', 'tiny', '--input', str(files/'summeval.csv')], env), '--dimensions')


def test_no_id_column_is_said(env, tmp_path):
    "A CSV whose ids sit in a column of another name (doc_id): the rows are numbered, and stderr says so and how to map the column."
    p = tmp_path/'noid.csv'
    with open(p, 'w', newline='') as f:
        w = csv.DictWriter(f, ['doc_id', 'article', 'summary']); w.writeheader()
        for k, r in enumerate(rows(2)): w.writerow({'doc_id': f'sys-{k}', 'article': r['article'], 'summary': r['summary']})
    r = checkeval_cli(['evaluate', '--input', str(p), '--method', 'likert', '--judge', 'tiny', '--dimensions', 'coherence'], env)
    assert 'no id column' in r.stderr and '--field id=COLUMN' in r.stderr, r.stderr[-2000:]
    r = checkeval_cli(['evaluate', '--input', str(p), '--method', 'likert', '--judge', 'tiny', '--dimensions', 'coherence', '-f', 'id=doc_id'], env)
    assert 'no id column' not in r.stderr and 'sys-0' in r.stdout, r.stderr[-2000:]


def test_unread_scores_print_blank():
    "A run where no reply was read: its score column prints blank (as a missing score among numbers does), never 'None'."
    import pandas as pd
    from checkeval.results import format_report
    sc = pd.DataFrame({'item': ['sys-a-001', 'sys-a-002'], 'system': ['unknown']*2, 'dimension': ['clarity']*2, 'score': [None, None],
                       'answered': [0, 0], 'asked': [1, 1]})
    rep = dict(meta=dict(method='likert', data='mine', judge='smollm2', answers=2, parsed=0, parse_rate=0.0), scores=sc,
               means=pd.DataFrame({'dimension': ['clarity'], 'mean': [float('nan')], 'items scored': [0], 'items': [2]}), questions=pd.DataFrame(), separating=pd.DataFrame(),
               metaeval=pd.DataFrame(), path='runs/x')
    text = format_report(rep)
    assert 'sys-a-001' in text and 'None' not in text, text


def test_checkeval_no_reply_read_is_no_score(env, tmp_path):
    "CheckEval on a user's file, no reply read (tiny, plumbing only): the item has no score (blank in scores.csv), never 0."
    p = tmp_path/'mine.jsonl'
    p.write_text(''.join(json.dumps({'id': f'sys-{k}', 'source': r['article'], 'output': r['summary']}) + '\n' for k, r in enumerate(rows(2))))
    q = tmp_path/'q.txt'; q.write_text('Is the summary easy to read?\nIs every sentence complete?\n')
    r = checkeval_cli(['evaluate', '--input', str(p), '--method', 'checkeval', '--judge', 'tiny', '--criterion', 'clarity=Plain words.',
                       '--checklist', f'clarity={q}'], env)
    assert 'Traceback' not in r.stderr, r.stderr[-2000:]
    sc = list(csv.DictReader(open(run_of(r)/'scores.csv')))
    assert len(sc) == 2 and all(x['score'] == '' for x in sc if x['answered'] == '0'), sc
    assert any(x['answered'] == '0' for x in sc)     # the case this test is about: tiny's replies are not read


def test_parquet_reads_as_the_jsonl_does(tmp_path):
    "A Parquet file (pyarrow, a dependency) gives the same items, ids kept, as the same rows in JSON Lines."
    import pandas as pd
    from checkeval.data import read_input
    data = rows(4)
    pd.DataFrame(data).to_parquet(tmp_path/'outs.parquet')
    (tmp_path/'outs.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in data))
    fields = ['id=doc', 'score:coherence=rating']
    pq, js = read_input(tmp_path/'outs.parquet', fields), read_input(tmp_path/'outs.jsonl', fields)
    assert [i.item_id for i in pq.items] == [r['doc'] for r in data]
    assert [(i.item_id, i.source, i.output, i.scores) for i in pq.items] == [(i.item_id, i.source, i.output, i.scores) for i in js.items]
