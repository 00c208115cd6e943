"""`python -m elastic_gpu.package <engine address>`: serve the component provider (what the plugin runs)."""

from elastic_gpu.package.provider import main

if __name__ == "__main__":
    main()
