/** Token and model-call accounting for one turn (root, llm_query and children together), with the call cap. */
import type { Usage as PiUsage } from "@mariozechner/pi-ai";
import type { Usage } from "./events.ts";

export class CapReached extends Error {
  override name = "CapReached";
}

export class UsageMeter {
  inputTokens = 0;
  outputTokens = 0;
  llmCalls = 0;

  constructor(
    private readonly maxCalls: number,
    private readonly parent?: UsageMeter,
  ) {}

  /** Counts one model call; throws CapReached past the cap. */
  countCall(): void {
    if (this.llmCalls >= this.maxCalls)
      throw new CapReached(`the model-call limit of ${this.maxCalls} is reached`);
    this.llmCalls++;
    this.parent?.countCall();
  }

  add(usage: PiUsage): void {
    this.inputTokens += usage.input ?? 0;
    this.outputTokens += usage.output ?? 0;
    this.parent?.add(usage);
  }

  snapshot(): Usage {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      totalTokens: this.inputTokens + this.outputTokens,
      llmCalls: this.llmCalls,
    };
  }
}
