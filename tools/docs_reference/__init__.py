"""The reference pages of the documentation site, generated from the code: the CRDs' fields, ``kto``'s commands,
the operator's metrics, the condition reasons, the settings and the Helm values. Never typed by hand, so they
cannot drift from what they describe; ``tests/docs/test_reference_is_current.py`` fails when one is stale."""
