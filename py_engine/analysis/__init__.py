"""A finished run read: metrics, the SLO and sizing, results as documents, calibration, validation."""
