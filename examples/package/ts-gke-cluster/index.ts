import * as pulumi from "@pulumi/pulumi";
import * as elasticGpu from "@pulumi/elastic-gpu";

const gcp = new pulumi.Config("gcp");

// The cluster, its VPC network and node service account. Its settings are plain values (they decide what
// it creates), so they are literals or config, not other resources' outputs.
const cluster = new elasticGpu.GkeCluster("ml", {
    clusterName: "ml",
    project: gcp.require("project"),
    region: "us-central1",
    zones: ["us-central1-a", "us-central1-b"],
    kubernetesVersion: "1.35",
    privateNodes: true,
    tags: { team: "ml" },
});

// One L4 spot node pool per zone, 0..4 nodes in total, with an on-demand fallback, on the cluster above.
const l4 = new elasticGpu.SpotGpuPool("l4", {
    cluster: cluster,
    instanceTypes: ["g2-standard-4"],
    maxSize: 4,
    onDemandFallback: true,
});

export const clusterName = cluster.clusterName;
export const kubeconfig = cluster.kubeconfig; // a secret
export const nodeGroupNames = l4.nodeGroupNames;
