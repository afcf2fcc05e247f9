"""What serves cells, one module per engine behind one interface (engine.Engine; registry.engine by name): a
llama-server of this run's build, a vLLM server from its build's environment (vllm_env), or an endpoint the user runs;
and what they share: starting a server on 127.0.0.1, the streaming clients, the /metrics scrape."""
