"""The audit record: a signed, append-only Merkle log over every stored event (RFC 9162 hashing, C2SP checkpoints).

- `merkle`: the tree's hashing, proofs and their verification (RFC 9162 §2.1), pure functions;
- `notes`: C2SP signed notes, Ed25519 keys in the `golang.org/x/mod/sumdb/note` formats, checkpoints;
- `keys`: the deployment's signing key on disk (`TRAMITA_SIGNING_KEY`) and the verifier keys an auditor trusts;
- `log`: the tree kept in the database beside the events (a cache, rebuilt by `verify`), and its checkpoints;
- `verify`: the full verification of a store (chains, tree, checkpoints, signatures) and of a receipt.

The formats are specified for third parties in `docs/audit.md`.
"""
