"""The scenario: every field declared once, validation at the edge, the typed Scenario, presets."""
