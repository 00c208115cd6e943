"""A program's offline_mocks.py that fails or falls short is named by its file and line, and an invoke the library
makes of its own says so: who asked, with which arguments, and what it needs back. The library's own reads of what
the program declares are answered from the program's resources, never from the user's mock."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import run_preview

EXISTING = """
from elastic_gpu import EksCluster

EksCluster.existing(
    "c",
    cluster_name="c",
    kubernetes_version="1.33",
    node_role_arn="arn:aws:iam::123456789012:role/nodes",
    subnet_ids={{"us-east-1a": {subnet}}},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X",
    oidc_provider_url="https://oidc.eks.us-east-1.amazonaws.com/id/X",
    region="us-east-1",
)
"""

#: A mock written for the program's own getSubnet call, by zone (line 5 raises for any other call).
BY_ZONE = """\
SUBNETS = {"us-east-1a": "subnet-0aaaaaaaaaaaaaaa1"}


def subnet(args):
    return {"id": SUBNETS[args["availabilityZone"]], "mapPublicIpOnLaunch": False, "vpcId": "vpc-1"}


INVOKES = {"aws:ec2/getSubnet:getSubnet": subnet}
"""


def program(tmp_path: Path, main: str, mocks: str | None = None) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: mockerrors\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent(main))
    if mocks is not None:
        (tmp_path / "offline_mocks.py").write_text(mocks)
    return tmp_path


def problem(tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        run_preview("dev", tmp_path)
    [text] = caught.value.problems
    return text


def test_a_library_invoke_the_users_mock_fails_on_names_the_mock_line_the_caller_the_arguments_and_the_answer(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    program(tmp_path, EXISTING.format(subnet='"subnet-0aaaaaaaaaaaaaaa1"'), BY_ZONE)
    text = problem(tmp_path)
    assert text.startswith(f"{tmp_path / 'offline_mocks.py'}:5: INVOKES['aws:ec2/getSubnet:getSubnet'] raised KeyError")
    # who asked (the library, at its line in the EKS handle), with what, and what it needs back
    assert "this invoke is the library's own, not the program's: elastic_gpu/aws/cluster.py:" in text
    assert "(public_subnet_ids) asked aws:ec2/getSubnet:getSubnet with" in text
    assert "'id': 'subnet-0aaaaaaaaaaaaaaa1'" in text
    assert "it needs back what the built-in answer gives for them:" in text and "'mapPublicIpOnLaunch': False" in text
    assert "__main__.py" not in text and "the program raised" not in text
    # reported once: no asyncio "never retrieved" traceback for the tasks that failed with it
    err = capfd.readouterr().err
    assert "never retrieved" not in err and "Traceback" not in err


def test_the_librarys_read_of_a_subnet_the_program_declares_is_answered_from_it_not_the_users_mock(
    tmp_path: Path,
) -> None:
    main = (
        "import pulumi_aws as aws\n\n"
        'subnet = aws.ec2.Subnet("a", vpc_id="vpc-1", cidr_block="10.0.0.0/24", availability_zone="us-east-1a",'
        " map_public_ip_on_launch=True)\n" + EXISTING.format(subnet="subnet.id")
    )
    raising = (
        'def fail(args):\n    raise RuntimeError("the program\'s own mock, asked")\n\n\n'
        'INVOKES = {"aws:ec2/getSubnet:getSubnet": fail}\n'
    )
    program(tmp_path, main, raising)
    preview = run_preview("dev", tmp_path)
    handle = preview.one("elastic-gpu:index:ExistingEksCluster", "c")
    # the declared subnet maps public IPs, as the program declares it (the described account knows nothing of it)
    assert handle.inputs["publicSubnetIds"] == ["subnet-a"]


def test_a_declared_subnet_without_public_ips_reads_as_private(tmp_path: Path) -> None:
    main = (
        "import pulumi_aws as aws\n\n"
        'subnet = aws.ec2.Subnet("a", vpc_id="vpc-1", cidr_block="10.0.0.0/24", availability_zone="us-east-1a")\n'
        + EXISTING.format(subnet="subnet.id")
    )
    program(tmp_path, main)
    preview = run_preview("dev", tmp_path)
    assert preview.one("elastic-gpu:index:ExistingEksCluster", "c").inputs["publicSubnetIds"] == []


def test_the_programs_own_invoke_failing_in_its_mock_names_the_mock_not_the_library(tmp_path: Path) -> None:
    main = 'import pulumi_aws as aws\n\naws.ec2.get_subnet(id="subnet-0bbbbbbbbbbbbbbb2")\n'
    program(tmp_path, main, BY_ZONE)
    text = problem(tmp_path)
    assert text.startswith(f"{tmp_path / 'offline_mocks.py'}:5: INVOKES['aws:ec2/getSubnet:getSubnet'] raised KeyError")
    assert "library" not in text


def test_a_resource_mock_that_raises_names_its_line(tmp_path: Path) -> None:
    main = 'import pulumi_aws as aws\n\naws.ec2.Vpc("v", cidr_block="10.0.0.0/16")\n'
    mocks = 'RESOURCES = {\n    "aws:ec2/vpc:Vpc": lambda name, inputs: {"arn": inputs["missing"]},\n}\n'
    program(tmp_path, main, mocks)
    text = problem(tmp_path)
    assert text.startswith(f"{tmp_path / 'offline_mocks.py'}:2: RESOURCES['aws:ec2/vpc:Vpc'] raised KeyError")


def test_a_mocks_file_that_fails_to_load_names_its_line(tmp_path: Path) -> None:
    program(tmp_path, "import pulumi\n", "import os\n\nINVOKES = {os.environ['NO_SUCH_VARIABLE_X']: None}\n")
    text = problem(tmp_path)
    assert text.startswith(f"{tmp_path / 'offline_mocks.py'}:3: loading it raised KeyError")


def test_a_users_answer_to_a_library_invoke_that_lacks_what_the_library_reads_is_a_warning(tmp_path: Path) -> None:
    mocks = 'INVOKES = {"aws:ec2/getSubnet:getSubnet": lambda args: {"id": args["id"]}}\n'
    program(tmp_path, EXISTING.format(subnet='"subnet-0aaaaaaaaaaaaaaa1"'), mocks)
    preview = run_preview("dev", tmp_path)
    [warning] = [w for w in preview.warnings if "INVOKES" in w]
    assert "INVOKES['aws:ec2/getSubnet:getSubnet'] answered without mapPublicIpOnLaunch, vpcId" in warning
    assert "elastic_gpu/aws/cluster.py:" in warning and "(public_subnet_ids)" in warning
