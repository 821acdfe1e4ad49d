"""Writes botocore-s3.json: S3 requests (GET with a range, PUT, the multipart upload's calls,
a listing) signed by botocore's S3SigV4Auth at a fixed time, with the canonical request and
the Authorization header it made. SigV4SignerTests sign the same requests and compare.

    python3 botocore-s3.py > botocore-s3.json   (any Python with botocore, e.g. the moto venv)
"""
import datetime
import hashlib
import json
import sys

import botocore
import botocore.auth
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

NOW = datetime.datetime(2026, 11, 26, 17, 5, 9)
botocore.auth.get_current_datetime = lambda: NOW

KEY = Credentials("AKIAEXAMPLEBATCHRUN", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
TEMPORARY = Credentials("ASIAEXAMPLEBATCHRUN", "tEmPoRaRy/SeCrEt+KeY0123456789abcdefGHIJ", "FwoGZXIvYXdzEXAMPLEtoken+/=")


class RecordingAuth(S3SigV4Auth):
    """botocore's S3 signer, keeping the canonical request it signed."""
    def canonical_request(self, request):
        self.recorded = super().canonical_request(request)
        return self.recorded


class UnsignedPayload:
    """A client configuration that turns payload signing off (S3 over HTTPS)."""
    s3 = {"payload_signing_enabled": False}


CASES = [
    # name, credentials, region, scheme, host, decoded path, query pairs, headers, body, unsigned
    ("get-range-path-style", KEY, "us-east-1", "http", "127.0.0.1:54321", "/feeds/flights.csv.gz", [],
     {"Range": "bytes=1048576-"}, b"", False),
    ("get-key-needing-encoding", KEY, "eu-west-1", "http", "127.0.0.1:54321",
     "/feeds/2026/day one/caf\u00e9 (v2)+x=y&z.csv", [], {}, b"", False),
    ("get-virtual-hosted-unsigned", KEY, "eu-central-1", "https", "my-bucket.s3.eu-central-1.amazonaws.com",
     "/exports/a.ndjson", [], {"Range": "bytes=0-"}, b"", True),
    ("get-session-token", TEMPORARY, "us-west-2", "http", "localhost:9000", "/b/k.csv", [], {}, b"", False),
    ("put-object", KEY, "us-east-1", "http", "127.0.0.1:54321", "/out/result.csv",
     [], {"Content-Type": "text/csv"}, b"id,name\n1,a\n2,b\n", False),
    ("create-multipart-upload", TEMPORARY, "us-east-1", "http", "127.0.0.1:54321", "/out/big.csv.gz",
     [("uploads", "")], {}, b"", False),
    ("upload-part", KEY, "us-east-1", "http", "127.0.0.1:54321", "/out/big.csv.gz",
     [("uploadId", "2~abc/DEF+ghi=="), ("partNumber", "12")], {}, b"x" * 70000, False),
    ("complete-multipart-upload", KEY, "us-east-1", "http", "127.0.0.1:54321", "/out/big.csv.gz",
     [("uploadId", "2~abc/DEF+ghi==")], {"Content-Type": "application/xml"},
     b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part></CompleteMultipartUpload>", False),
    ("abort-multipart-upload", KEY, "us-east-1", "http", "127.0.0.1:54321", "/out/big.csv.gz",
     [("uploadId", "2~abc/DEF+ghi==")], {}, b"", False),
    ("list-objects-v2", KEY, "us-east-1", "http", "127.0.0.1:54321", "/out",
     [("list-type", "2"), ("prefix", "big run/")], {}, b"", False),
]

METHODS = {"get": "GET", "put": "PUT", "upload": "PUT", "create": "POST", "complete": "POST", "abort": "DELETE", "list": "GET"}

vectors = []
for name, credentials, region, scheme, host, path, query, headers, body, unsigned in CASES:
    method = METHODS[name.split("-")[0]]
    url = f"{scheme}://{host}{percent_encode(path, safe='/~')}"
    if query:
        url += "?" + "&".join(f"{percent_encode(k, safe='-_.~')}={percent_encode(v, safe='-_.~')}" for k, v in query)
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
    if unsigned:
        request.context["client_config"] = UnsignedPayload()
    auth = RecordingAuth(credentials, "s3", region)
    auth.add_auth(request)
    canonical = auth.recorded
    vectors.append({
        "name": name,
        "access_key_id": credentials.access_key,
        "secret_access_key": credentials.secret_key,
        "session_token": credentials.token,
        "region": region,
        "method": method,
        "host": host,
        "path": path,
        "query": [[k, v] for k, v in query],
        "headers": [[k, v] for k, v in headers.items()],
        "body_sha256": None if unsigned or not body else hashlib.sha256(body).hexdigest(),
        "unsigned": unsigned,
        "timestamp": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "target": url.split(host, 1)[1],
        "canonical_request": canonical,
        "x_amz_content_sha256": request.headers["X-Amz-Content-SHA256"],
        "authorization": request.headers["Authorization"],
    })

json.dump({"botocore": botocore.__version__, "vectors": vectors}, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
