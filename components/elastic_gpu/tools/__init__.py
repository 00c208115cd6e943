"""The tooling around the components: the offline runner, preview, diff and reports (`offline`), the
simulation of the autoscalers and provisioners (`simulation`), the policy pack's rules (`policy`) and the cost
estimate (`cost`). Nothing here declares a resource; it reads what a program declared."""
