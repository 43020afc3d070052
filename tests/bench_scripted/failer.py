"""``failer/...``: a scripted model that fails every shipped bench task (a local plugin)."""

from scripted import fail, model

MODEL = model("failer", fail, None)
modelplug_resolve = MODEL.modelplug_resolve
modelplug_providers = MODEL.modelplug_providers
modelplug_stream = MODEL.modelplug_stream
