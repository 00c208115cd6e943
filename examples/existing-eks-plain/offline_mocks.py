"""What the offline preview cannot know on its own: the infra stack's outputs (a real run reads them)."""

STACK_REFERENCES = {
    "acme/infra/prod": {
        "clusterName": "prod-eu",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/prod-eu-nodes",
        "privateSubnetIds": {"eu-west-1a": "subnet-0aaaaaaaaaaaaaaa1", "eu-west-1b": "subnet-0bbbbbbbbbbbbbbb2"},
        "oidcProviderArn": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE",
        "oidcProviderUrl": "https://oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE",
    }
}
