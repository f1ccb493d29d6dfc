"""The rules the auditor applies: one registry feeds the CLI, the findings and the report."""
