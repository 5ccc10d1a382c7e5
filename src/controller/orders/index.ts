export { startOrderController, type OrderController, type OrderControllerOptions } from './controller.ts';
