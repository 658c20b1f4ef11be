// The JS Agents SDK's OpenAIHostedMultiAgentModel (@openai/agents, experimental hosted multi-agent)
// against a live responsa: node agents_js_multi_agent.cjs BASE_URL CONCURRENCY PROMPT. Prints one JSON
// line: the final output, the response ids, the cities its get_weather tool was called for, and the
// agent each new item was attributed to. Run by tests/test_agents_js_multi_agent.py, with NODE_PATH
// naming the node_modules that holds @openai/agents (CommonJS: NODE_PATH reaches require, not import).
const { Agent, run, tool, setTracingDisabled } = require('@openai/agents');
const { OpenAIHostedMultiAgentModel } = require('@openai/agents-openai/experimental/hosted-multi-agent');
const OpenAI = require('openai');
const { z } = require('zod');

async function main() {
  const [baseURL, concurrency, prompt] = process.argv.slice(2);
  setTracingDisabled(true);
  const cities = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city now.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      cities.push(city);
      return `Sunny and 21 degrees in ${city}.`;
    },
  });
  const client = new OpenAI({ baseURL, apiKey: '-', maxRetries: 0 });
  const model = new OpenAIHostedMultiAgentModel(client, 'sim', { maxConcurrentSubagents: Number(concurrency) });
  const agent = new Agent({ name: 'lead', instructions: 'Delegate when asked to.', tools: [getWeather], model });
  try {
    const result = await run(agent, prompt, { maxTurns: 8 });
    const agents = result.newItems.map((item) => item.rawItem?.providerData?.agent?.agent_name ?? null);
    const responses = result.rawResponses.map((response) => response.responseId);
    console.log(JSON.stringify({ final: result.finalOutput, responses, cities, agents }));
  } finally {
    await model.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
