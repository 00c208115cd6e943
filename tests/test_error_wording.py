"""Messages name what the user wrote: the constructor they called, only the fields they set, and a value known
only at deploy time in words (never `<pulumi.output.Output object at 0x...>`)."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu.errors import ConfigError

POOL = """
from elastic_gpu import EksCluster, EksClusterArgs, SpotGpuPool, SpotGpuPoolArgs
c = EksCluster("c", EksClusterArgs(cluster_name="c", region="us-east-1", zones=["us-east-1a", "us-east-1b"],
                                   kubernetes_version="1.35"))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], on_demand_fallback=True, SIZES))
"""


def problems(run_program: Any, source: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_program(source)
    return caught.value.problems


def test_a_max_size_below_the_group_count_blames_max_size_alone_when_fallback_max_size_is_unset(
    run_program: Any,
) -> None:
    [problem] = problems(run_program, POOL.replace("SIZES", "max_size=0"))
    assert "SpotGpuPoolArgs.max_size: it is the total over the 2 node groups" in problem and "(got 0)" in problem
    assert "fallback_max_size" not in problem


def test_a_fallback_max_size_the_user_set_is_named_when_it_is_the_short_one(run_program: Any) -> None:
    [problem] = problems(run_program, POOL.replace("SIZES", "max_size=4, fallback_max_size=1"))
    assert "SpotGpuPoolArgs.fallback_max_size: it is the total over the 2 node groups" in problem


FROM_PULUMI_EKS = """
import pulumi_eks as eks
from elastic_gpu import EksCluster

cluster = eks.Cluster("ml", name="ml", vpc_id="vpc-1", private_subnet_ids=["subnet-a"], authentication_mode="API",
                      skip_default_node_group=True, version="1.35")
EksCluster.HOW
"""


@pytest.mark.parametrize(
    ("how", "called"),
    [
        (
            'from_pulumi_eks("h", cluster, subnet_ids={"us-west-2a": "subnet-a"}, '
            'node_role_arn="arn:aws:iam::123456789012:role/gpu")',
            "EksCluster.from_pulumi_eks 'h'",
        ),
        (
            'existing("h", cluster_name="ml", kubernetes_version="1.35", subnet_ids={"us-west-2a": "subnet-a"}, '
            'node_role_arn="arn:aws:iam::123456789012:role/gpu", oidc_provider_arn="arn:aws:iam::123456789012:'
            'oidc-provider/x", oidc_provider_url="https://x")',
            "EksCluster.existing 'h'",
        ),
    ],
)
def test_a_handles_zone_error_names_the_constructor_the_user_called(tmp_path: Any, how: str, called: str) -> None:
    from elastic_gpu.tools.offline.runner import run_preview

    (tmp_path / "Pulumi.yaml").write_text("name: wording\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(FROM_PULUMI_EKS.replace("HOW", how))
    with pytest.raises(ConfigError) as caught:
        run_preview("dev", tmp_path)
    [problem] = caught.value.problems
    assert problem.startswith(f"{called}: subnet_ids['us-west-2a']"), problem
    assert str(caught.value).startswith(f"invalid {called}")


OUTPUTS = """
import pulumi
from elastic_gpu import EksCluster, EksClusterArgs, SpotGpuPool, SpotGpuPoolArgs
c = EksCluster("c", EksClusterArgs(cluster_name="c", region="us-east-1", zones=["us-east-1a", "us-east-1b"],
                                   kubernetes_version="1.35"))
later = pulumi.Output.from_input("x")
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=4, FIELD))
"""


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("kubelet_config=later", "kubelet_config: must be a mapping of KubeletConfiguration keys, got an Output"),
        (
            "security_group_ids=later",
            "security_group_ids: must be a non-empty list of security group ids, got an Output",
        ),
        (
            "subnet_ids=[later]",
            "subnet_ids: must map zones to subnet ids (EKS) or be one subnet id (AKS), got [<an Output>]",
        ),
        ("user_data=c", "user_data: must be a non-empty string or an Output, got the EksCluster 'c'"),
    ],
)
def test_a_value_known_only_at_deploy_time_is_said_in_words_never_as_its_repr(
    run_program: Any, field: str, said: str
) -> None:
    text = "\n".join(problems(run_program, OUTPUTS.replace("FIELD", field)))
    assert said in text
    assert " object at 0x" not in text


def test_said_never_prints_an_address() -> None:
    import pulumi

    from elastic_gpu.validation import said

    # An Output made without Output.from_input, which would track it process-wide on an event loop.
    output = pulumi.Output.__new__(pulumi.Output)
    assert " object at 0x" in object.__repr__(output)
    assert said(output) == "an Output (known only at deploy time)"
    assert said({"us-east-1a": output}) == "{'us-east-1a': <an Output>}"
    assert said(object()) == "an object" and said(["a", 1]) == "['a', 1]"


def test_a_resource_passed_where_its_name_goes_is_named_not_printed(run_program: Any) -> None:
    source = (
        "import pulumi_aws as aws\nfrom elastic_gpu import EksCluster\n"
        'role = aws.iam.Role("nodes", assume_role_policy="{}")\n'
        'EksCluster.existing("h", cluster_name="ml", kubernetes_version="1.35", subnet_ids={"us-east-1a": "subnet-a"},'
        ' node_role_arn=role, oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x",'
        ' oidc_provider_url="https://x", region="us-east-1")\n'
    )
    [problem] = problems(run_program, source)
    assert problem == "EksCluster.existing 'h': node_role_arn: must be a string or an Output, got the Role 'nodes'"
