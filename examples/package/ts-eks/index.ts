import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";
import * as elasticGpu from "@pulumi/elastic-gpu";

const config = new pulumi.Config();
// The cluster you run: its name, role, subnets and OIDC issuer are read from AWS, not typed twice.
const eks = aws.eks.getClusterOutput({ name: config.require("clusterName") });
const issuer = eks.identities[0].oidcs[0].issuer;
const oidc = aws.iam.getOpenIdConnectProviderOutput({ url: issuer });

const cluster = new elasticGpu.ExistingEksCluster("prod-a", {
    clusterName: eks.name,
    kubernetesVersion: "1.35",
    nodeRoleArn: "arn:aws:iam::123456789012:role/prod-a-nodes",
    subnetIds: {
        "us-west-2a": "subnet-0aaaaaaaaaaaaaaa1",
        "us-west-2b": "subnet-0bbbbbbbbbbbbbbb2",
    },
    oidcProviderArn: oidc.arn,
    oidcProviderUrl: issuer,
});

// One L4 spot node group per zone, 0..4 nodes in total, with an on-demand fallback.
const l4 = new elasticGpu.SpotGpuPool("l4", {
    cluster: cluster,
    instanceTypes: ["g6.xlarge"],
    maxSize: 4,
    onDemandFallback: true,
    extraLabels: { team: "ml" },
});

// NVIDIA's device plugin on the pool's nodes, through the handle's Kubernetes provider.
new elasticGpu.NvidiaDevicePlugin("nvidia", {
    provider: cluster.provider,
    gpuPools: [l4],
});

// The general pool for the autoscaler and system pods, on-demand.
const general = new elasticGpu.GeneralPool("general", {
    cluster: cluster,
    instanceTypes: ["m6i.large", "m6a.large"],
    maxSize: 3,
});

// The cluster-autoscaler, ranking the spot node groups above their on-demand fallback.
const autoscaler = new elasticGpu.ClusterAutoscaler("autoscaler", {
    cluster: cluster,
    gpuPools: [l4],
    generalPool: general,
    scaleDownUnneededTime: "5m",
});

export const nodeGroupNames = l4.nodeGroupNames;
export const autoscalerRoleArn = autoscaler.roleArn;
