export { startRetentionController, type RetentionController, type RetentionControllerOptions, type RetentionStats } from './controller.ts';
