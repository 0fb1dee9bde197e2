# SPDX-License-Identifier: MIT
"""A protocol-faithful fake of E2B (control plane and envd), standard library only."""
