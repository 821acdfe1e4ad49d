"""The tests' own S3 client (boto3, from the moto virtual environment): sets moto up and
reads and writes what batchrun is checked against, independently of batchrun's signer.

    python moto-s3.py FOLDER setup
        IAM users with access keys: `allowed` (every action) and `denied` (none); then turns
        moto's authentication on. Writes their keys to FOLDER/credentials.json.
    python moto-s3.py FOLDER COMMAND   (as `allowed`; no secret on the command line)
        mb BUCKET | put BUCKET KEY FILE | get BUCKET KEY FILE | ls BUCKET | uploads BUCKET
        | head BUCKET KEY | putmany BUCKET PREFIX COUNT (COUNT small objects PREFIX0000.txt ...)

FOLDER is the server's (moto-throwaway.sh start): its `endpoint` file has the URL.
"""
import json
import os
import sys
import urllib.request

import boto3

FOLDER = sys.argv[1]
with open(os.path.join(FOLDER, "endpoint")) as file:
    ENDPOINT = file.read().strip()


def client(service):
    with open(os.path.join(FOLDER, "credentials.json")) as file:
        keys = json.load(file)["allowed"]
    return boto3.client(service, endpoint_url=ENDPOINT, region_name="us-east-1",
                        aws_access_key_id=keys["access_key_id"], aws_secret_access_key=keys["secret_access_key"])


def setup():
    iam = boto3.client("iam", endpoint_url=ENDPOINT, region_name="us-east-1",
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    keys = {}
    for user, actions in (("allowed", "*"), ("denied", None)):
        iam.create_user(UserName=user)
        if actions:
            policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
            iam.put_user_policy(UserName=user, PolicyName="all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        keys[user] = {"access_key_id": key["AccessKeyId"], "secret_access_key": key["SecretAccessKey"]}
    # (not a form: moto reads the body as it is)
    request = urllib.request.Request(ENDPOINT + "/moto-api/reset-auth", data=b"0", method="POST",
                                     headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(request, timeout=30).read()
    with open(os.path.join(FOLDER, "credentials.json"), "w") as file:
        json.dump(keys, file)


def main(command, *arguments):
    if command == "setup":
        return setup()
    s3 = client("s3")
    if command == "mb":
        s3.create_bucket(Bucket=arguments[0])
    elif command == "put":
        with open(arguments[2], "rb") as body:
            s3.put_object(Bucket=arguments[0], Key=arguments[1], Body=body)
    elif command == "get":
        with open(arguments[2], "wb") as out:
            out.write(s3.get_object(Bucket=arguments[0], Key=arguments[1])["Body"].read())
    elif command == "ls":
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=arguments[0]):
            for item in page.get("Contents", []):
                print(item["Key"])
    elif command == "putmany":
        for index in range(int(arguments[2])):
            s3.put_object(Bucket=arguments[0], Key=f"{arguments[1]}{index:04d}.txt", Body=b"x")
    elif command == "uploads":
        print(len(s3.list_multipart_uploads(Bucket=arguments[0]).get("Uploads", [])))
    elif command == "head":
        head = s3.head_object(Bucket=arguments[0], Key=arguments[1])
        print(head["ETag"], head["ContentLength"])
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[2:])
