"""Core's own default plugins, registered in the same plugin manager as every other."""
