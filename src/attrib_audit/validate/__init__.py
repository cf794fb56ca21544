"""Validate on the target dataset: how many labels (`plan`), which pairs (`sample`), and a local page to label them
(`label`)."""
