"""Check-Eval (issue 27): the criterion checklist asks for as many items as needed with or without a JSON schema, and the
paper's SummEval run uses SummEval's own criterion definitions, loaded from the released data."""
import pytest

from checkeval import data
from checkeval.core import Dimension
from checkeval.judges import FunctionJudge
from checkeval.methods.keypoint import CRITERIA, checklist_request, resolve_options, summeval_definitions

pytestmark = pytest.mark.skipif(not data.available('upstream/checkeval/summeval_questions/fluency_seed.yaml'), reason='CheckEval release not available')


@pytest.mark.parametrize('schema', [True, False])
def test_criterion_checklist_asks_for_as_many_items_as_needed(schema):
    req = checklist_request(FunctionJudge(lambda r: '', supports_json_schema=schema), 'coherence')
    user = req.messages[-1]['content']
    assert 'as many' in user and 'five' not in user and '1 to 5' not in user


def test_summeval_definitions_are_summevals_wording():
    d = summeval_definitions()
    assert d['consistency'][1] == ('the factual alignment between the summary and the summarized source. A factually consistent summary '
                                   'contains only statements that are entailed by the source document. Annotators were also asked to '
                                   'penalize summaries that contained hallucinated facts.')
    assert d['fluency'][1].startswith('the quality of individual sentences.')
    opts = resolve_options('summeval', [Dimension(name=c) for c in d])
    assert opts['definitions'] == d and set(opts['definitions_source'].values()) == {'SummEval'}
    assert resolve_options('legal_sts', [Dimension(name='similarity')])['definitions']['fluency'] == CRITERIA['pt']['fluency']
