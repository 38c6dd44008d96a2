# Computes test/vectors/observation-golden-v1.json independently of the TypeScript encoder:
# Python's json module (compact separators, ensure_ascii=False) gives exactly the spec's escaping
# (short escapes for " \ \b \t \n \f \r, lowercase \u00xx for other C0 controls, everything else
# raw UTF-8 including DEL, U+2028 and U+2029), integers exact. hashlib for SHA-256, the
# cryptography package for Ed25519.  Run: python3 test/vectors/observation-golden-v1.py
import hashlib, json, struct
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

seed = bytes([0x2a] * 32)
key = Ed25519PrivateKey.from_private_bytes(seed)
pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
key_id = hashlib.sha256(pub).hexdigest()
U64_MAX = 18446744073709551615

assertion = {
    "version": 1,
    "task_id": "t.golden-1",
    "task_digest": "11" * 32,
    "attempt_id": "attempt_2",
    "attempt_digest": "22" * 32,
    "request_id": "req.3",
    "execution_operation_id": "op-4",
    "agent": {"owner_id": "alice.example", "agent_id": "claude-code"},
    "executor": {"registration_id": "reg-5", "executor_id": "box_6", "registration_epoch": U64_MAX, "verification_key_id": key_id},
    "fence": U64_MAX,
    "trust_class": "registered_executor_observation",
    "outcome": "uncertain",
    "criteria": [
        {
            "criterion": "c1",
            "outcome": "uncertain",
            "findings": [
                "ctl:\x01\x02\x07\x0b\x0e\x1b\x1f|short:\b\t\n\f\r|quote:\"|backslash:\\|slash:/",
                "del:\x7f|ls:\u2028|ps:\u2029|nbsp:\u00a0|bom-in-text:\ufeff",
                "emoji:\U0001F600\U0001F9EA|cjk:\u65e5\u672c|accents:e\u0301 \u00e9|rtl:\u05d0",
                "",
            ],
            "evidence_digests": ["ab" * 32, "00" * 32],
        },
        {"criterion": "c2", "outcome": "not_claimed", "findings": [], "evidence_digests": []},
    ],
    "executor_provenance": None,
}
signing = json.dumps(assertion, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
domain = b"agentscm.agent-workflow-observation.v1"
digest = hashlib.sha256(domain + b"\x00" + struct.pack(">Q", len(signing)) + signing).hexdigest()
signature = key.sign(bytes.fromhex(digest)).hex()
vector = {
    "description": "Own golden vector: control characters, DEL, U+2028/2029, emoji, combining and non-ASCII text, an empty finding, empty arrays and the largest u64 as fence and epoch. Computed by test/vectors/observation-golden-v1.py (Python json compact with ensure_ascii=False, hashlib, cryptography).",
    "test_private_key_seed_hex": seed.hex(),
    "public_key_hex": pub.hex(),
    "assertion_unsigned": assertion,
    "signing_bytes_hex": signing.hex(),
    "signing_bytes_length": len(signing),
    "digest": digest,
    "signature": signature,
}
with open(__file__.replace(".py", ".json"), "w", encoding="ascii") as f:
    json.dump(vector, f, ensure_ascii=True, indent=2)
    f.write("\n")
