"""``solver/...``: a scripted model that passes every shipped bench task (a local plugin)."""

from modelplug.contract.types import Price
from scripted import model, solve

MODEL = model("solver", solve, Price(input=1, output=2))
modelplug_resolve = MODEL.modelplug_resolve
modelplug_providers = MODEL.modelplug_providers
modelplug_stream = MODEL.modelplug_stream
