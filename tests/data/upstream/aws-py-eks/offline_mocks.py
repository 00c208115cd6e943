"""The answer of the program's own invoke (vpc.py's get_availability_zones) offline: us-east-2's zones."""

INVOKES = {
    "aws:index/getAvailabilityZones:getAvailabilityZones": lambda args: {
        "id": "us-east-2",
        "names": ["us-east-2a", "us-east-2b", "us-east-2c"],
        "zoneIds": ["use2-az1", "use2-az2", "use2-az3"],
        "groupNames": ["us-east-2"],
    }
}
