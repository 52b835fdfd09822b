"""S3 tests: credentials always come from here, so no client ever asks a metadata service."""

import os

# A client with no credentials asks the machine's role, an address off this machine: never here.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "artifactr")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "artifactr-secret")
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
