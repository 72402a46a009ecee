"""The agent reply arrives in the form Azure delivers it (azure-functions-durable-python#295).

The reply handler raises the event with the Python SDK's body (the reply's JSON text sent as
a JSON string); the Durable extension stores that string, so ``wait_for_external_event``
yields the JSON text. An event raised with the JSON itself yields the object.
"""

import json

from orchestrators.agent_steps import read_reply
from tests.orchestrators.test_order_workflow_replay import reply


def test_the_reply_as_json_text_reads_as_the_reply():
    answer = reply("charge", result={"chargeId": "c-1"})
    assert read_reply(json.dumps(answer)) == read_reply(answer)
    assert read_reply(json.dumps(answer)).operation == "charge"
