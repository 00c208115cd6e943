"""The plugin's entry point: Pulumi's Python language host runs `python <this directory> <engine address>`."""

from elastic_gpu.package.provider import main

main()
