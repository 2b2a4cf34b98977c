// The root README's NestJS snippet, in the app `nest new` made (its AppController kept).
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ZkModule } from '@zkrx/nestjs';
import { AppController } from './app.controller';
import { AppService } from './app.service';
import { Billing } from './billing';
import { OrdersController, Payments } from './orders.controller';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    // biome-ignore lint/suspicious/noUndeclaredEnvVars: the app's own setting, not turbo's
    ZkModule.forRoot({ connect: process.env.ZK_CONNECT ?? '127.0.0.1:2181', isGlobal: true }),
  ],
  controllers: [AppController, OrdersController],
  providers: [AppService, Billing, Payments],
})
export class AppModule {}
