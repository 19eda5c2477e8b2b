/**
 * A small survey corpus for tests: 12 papers on LLMs for planning in three themes (translation to
 * PDDL for classical planners, robot task planning, tool use), each theme's papers sharing phrases.
 */
import type { SurveySource } from '../../shared/survey/types';

const paper = (id: string, title: string, abstract: string, year = '2024'): SurveySource => ({
  id,
  title,
  text: `${title}.\n\n${abstract}`,
  authors: 'Doe, Jane and Roe, Richard',
  year,
  link: `https://arxiv.org/abs/${id}`,
  categories: [id.startsWith('p') ? 'language-translation' : id.startsWith('r') ? 'interactive-planning' : 'tool-integration'],
});

export const SURVEY_PAPERS: SurveySource[] = [
  paper(
    'p1',
    'Translating goals to PDDL',
    'Large language models translate natural language goals into PDDL problem files for classical planners. The classical planner then searches for an optimal plan from the PDDL specification. Translation errors in PDDL goals are the main failure mode for planning with language models.',
  ),
  paper(
    'p2',
    'PDDL domain generation',
    'We generate PDDL domain models with large language models and validate them with classical planners. Generated PDDL domains let classical planners solve planning tasks that language models cannot plan alone. Human feedback corrects PDDL action schemas before classical planners search.',
  ),
  paper(
    'p3',
    'LLM+P',
    'LLM+P converts a planning problem in natural language into PDDL and calls classical planners to find optimal plans. Classical planners return plans that LLM+P translates back into natural language for planning users.',
  ),
  paper(
    'p4',
    'Planning language models as translators',
    'Language models act as translators from natural language to PDDL, while classical planners guarantee plan correctness. PDDL translation accuracy of language models for planning improves with few-shot examples.',
  ),
  paper(
    'r1',
    'Robot task planning with language models',
    'Robot task planning uses large language models to decompose household instructions into robot actions. The robot executes each action and replans when an action fails during robot task planning with language models.',
  ),
  paper(
    'r2',
    'Grounded robot planning',
    'Language models propose robot action sequences that are grounded by affordance functions of the robot. Grounded robot planning lets a mobile manipulator robot complete long-horizon kitchen tasks planned by language models.',
  ),
  paper(
    'r3',
    'Closed-loop robot planning',
    'Closed-loop robot planning feeds robot observations back to the language model after every robot action. Feedback from robot sensors lets language models for planning correct failed robot actions in the household.',
  ),
  paper(
    'r4',
    'Embodied planning agents',
    'Embodied agents with language models plan robot navigation and manipulation in simulated homes. Robot success rates of planning with language models rise when the robot reports failures.',
  ),
  paper(
    't1',
    'Tool use for planning agents',
    'Language model agents plan sequences of tool calls to external APIs such as calculators and search engines. Tool use lets planning agents with language models answer questions that need fresh information.',
  ),
  paper(
    't2',
    'Planning API calls',
    'We plan API calls with language models by generating a tool graph before execution. Tool graphs make planning of tool calls by language models efficient and verifiable.',
  ),
  paper(
    't3',
    'Toolformer-style planning',
    'Language models learn when to call a tool and plan the tool arguments from self-supervised tool traces. Planning tool calls with language models reduces errors of arithmetic and lookup.',
  ),
  paper(
    't4',
    'Workflow planning with tools',
    'Workflow planning composes tool calls into executable workflows with language models for planning. Tool workflows planned by language models are checked by executing each tool call.',
  ),
];
